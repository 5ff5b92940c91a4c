#include "harness/report/markdown_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "harness/core/format.h"
#include "harness/report/markdown_helpers.h"
#include "harness/results/verdict_counts.h"

namespace harness::markdown {

namespace {

constexpr size_t kMaxFailuresShown = 12;

}  // namespace

void failures(std::string& out, const Group& g, Suite suite, const char* title) {
  if (case_ids(g, suite).empty()) return;
  out += fmt::format("#### {}\n\n", title);
  for (const auto* e : g.ranked) {
    std::vector<const CaseResult*> failing;
    for (const auto& c : e->cases) {
      if (c.suite == suite && (is_failure(c.verdict) || c.verdict == Verdict::harness_error)) failing.push_back(&c);
    }
    out += fmt::format("- **{}**: {}\n", markdown_cell(e->submission.name), verdict_counts(*e, suite));
    if (e->build.status != "ok") {
      out += fmt::format("  - build {}: {}\n", e->build.status, markdown_cell(e->build.reason));
      if (!e->build.log_path.empty()) out += fmt::format("  - full build log: {}\n", markdown_code(e->build.log_path));
      if (!e->build.log_excerpt.empty()) out += "\n" + markdown_code_block(e->build.log_excerpt) + "\n";
      continue;
    }
    if (failing.empty()) continue;
    out += "\n  | Case | Verdict | What went wrong | Reproduce |\n  |---|---|---|---|\n";
    for (size_t i = 0; i < failing.size() && i < kMaxFailuresShown; ++i) {
      const auto* c = failing[i];
      std::string what = markdown_cell(c->message);
      // What else the case found wrong, gravest first (settle_verdict).
      for (const Finding& other : c->other_failures) {
        what += fmt::format("<br>also {}: {}", verdict_name(other.verdict), markdown_cell(other.message, 200));
      }
      out += fmt::format("  | {} | {} | {} | {} |\n", markdown_code(c->id), verdict_name(c->verdict), what,
                         markdown_code(c->reproduce));
    }
    if (failing.size() > kMaxFailuresShown) {
      out +=
          fmt::format("\n  ... and {} more (every one is in the results file).\n", failing.size() - kMaxFailuresShown);
    }
    out += "\n";
  }
  out += "\n";
}

void performance(std::string& out, const Group& g) {
  const auto ids = case_ids(g, Suite::perf);
  if (ids.empty()) return;
  out += "#### Performance\n\n";
  if (g.device && g.device->peak) {
    out += fmt::format("Measured peak of {}: {} ({}), read-only {}; fractions below are of the copy peak.\n\n",
                       g.device->id, format_bandwidth(g.device->peak->copy_bytes_per_second), g.device->peak->method,
                       format_bandwidth(g.device->peak->read_bytes_per_second));
  }
  const EntryResult* baseline = nullptr;
  for (const auto* e : g.ranked) {
    if (e->submission.role == "baseline") baseline = e;
  }
  out += "| Case | Bytes moved |";
  for (const auto* e : g.ranked) out += fmt::format(" {} |", markdown_cell(e->submission.name));
  out += "\n|---|---:|";
  for (size_t i = 0; i < g.ranked.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& id : ids) {
    double bytes = 0;
    std::string row;
    const CaseResult* base = baseline ? baseline->find_case(id) : nullptr;
    for (const auto* e : g.ranked) {
      const CaseResult* c = e->find_case(id);
      if (!c) {
        row += " - |";
        continue;
      }
      bytes = c->bytes.total();
      if (c->verdict != Verdict::pass || !c->timing || !c->bandwidth) {
        row += fmt::format(" {} |", verdict_name(c->verdict));
        continue;
      }
      std::string speedup;
      if (base && base != c && base->verdict == Verdict::pass && base->timing) {
        speedup =
            fmt::format(", {:.1f}x the baseline", base->timing->scored_median_ns() / c->timing->scored_median_ns());
      }
      const std::string floor =
          c->timing->raised_to_floor()
              ? fmt::format(", the witness's floor: {} claimed", format_duration_ns(c->timing->summary.median))
              : "";
      // Compute-bound challenges count their arithmetic (metric "flops").
      const auto flops = c->metrics.find("flops");
      const std::string rate =
          flops != c->metrics.end() && flops->is_number()
              ? " <br>" + format_flop_rate(flops->get<double>() * 1e9 / c->timing->scored_median_ns())
              : "";
      const auto& load = c->timing->machine_load;
      const std::string busy = load && load->busy() ? fmt::format(", machine busy: others held {:.1f} of {} cores",
                                                                  load->other_cores, load->cores)
                                                    : "";
      // Results from before rooflines carry a fraction of the copy peak.
      row += fmt::format(" {} <br>{} ({} of {}{}){} <br><sub>spread {:.1f}%, n={}{}{}{}</sub> |",
                         format_duration_ns(c->timing->scored_median_ns()), format_bandwidth(*c->bandwidth),
                         format_percent(c->peak_fraction), c->roofline ? "roofline" : "peak", speedup, rate,
                         100 * c->timing->summary.relative_spread, c->timing->summary.count,
                         c->timing->cache_cold ? "" : ", cache warm", floor, busy);
    }
    out += fmt::format("| `{}` | {} |{}\n", id, format_bytes(bytes), row);
  }
  out +=
      "\nMedian time per call (never below the timing witness's floor, as scored; where the floor raised it, "
      "the worker's claimed median is beside it); bandwidth = bytes moved (the byte model) / median; roofline = the "
      "fastest that case's "
      "bytes read and written can move at the device's measured read and write ceilings; FLOP/s, where a "
      "challenge counts its arithmetic (the case's `flops` metric, counted as its README says), = that count / "
      "median; spread = (p90 - p10) / median. "
      "Calls rotate through input sets that together exceed twice the device's last-level cache (L2 on a GPU), so "
      "each call starts cold; a case where they did not is marked \"cache warm\".\n\n";
  for (const auto& id : ids) {
    std::vector<std::pair<std::string, double>> bars;
    for (const auto* e : g.ranked) {
      const CaseResult* c = e->find_case(id);
      if (c && c->verdict == Verdict::pass && c->bandwidth) bars.emplace_back(e->submission.name, *c->bandwidth / 1e9);
    }
    if (bars.empty()) continue;
    out += fmt::format("```mermaid\nxychart-beta\n    title \"{} (GB/s)\"\n    x-axis [", id);
    for (size_t i = 0; i < bars.size(); ++i) out += fmt::format("{}\"{}\"", i ? ", " : "", bars[i].first);
    out += "]\n    y-axis \"GB/s\"\n    bar [";
    for (size_t i = 0; i < bars.size(); ++i) out += fmt::format("{}{:.2f}", i ? ", " : "", bars[i].second);
    out += "]\n```\n\n";
  }
}

void completeness(std::string& out, const Group& g) {
  std::string lines;
  for (const auto* e : g.ranked) {
    std::vector<std::string> unsupported;
    for (const auto& c : e->cases) {
      if (c.verdict == Verdict::unsupported) unsupported.push_back("`" + c.id + "`");
    }
    if (unsupported.empty()) continue;
    std::string list;
    for (size_t i = 0; i < unsupported.size() && i < 8; ++i) list += (i ? ", " : "") + unsupported[i];
    if (unsupported.size() > 8) list += fmt::format(" and {} more", unsupported.size() - 8);
    lines += fmt::format("- **{}** declares {} case(s) unsupported: {}\n", markdown_cell(e->submission.name),
                         unsupported.size(), list);
  }
  if (lines.empty()) return;
  out += "#### Completeness\n\n" + lines + "\n";
}

void mutants(std::string& out, const Group& g) {
  if (g.mutants.empty()) return;
  out +=
      "#### Mutants and negative controls (never ranked)\n\n"
      "| Submission | Must get | Got in that suite | Evidence | Reproduce |\n|---|---|---|---|---|\n";
  for (const auto* e : g.mutants) {
    const auto& expect = e->submission.expect;
    const std::string expected = expect
                                     ? fmt::format("{} in {}{}", verdict_name(expect->verdict),
                                                   suite_name(expect->suite), expect->every_case ? " (every case)" : "")
                                     : "-";
    // The first case that got the declared verdict, or the first failure.
    const CaseResult* evidence = nullptr;
    for (const auto& c : e->cases) {
      if (expect && c.suite == expect->suite && c.verdict == expect->verdict) {
        evidence = &c;
        break;
      }
      if (!evidence && is_failure(c.verdict)) evidence = &c;
    }
    out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(e->submission.name), expected,
                       verdict_counts(*e, expect ? std::optional<Suite>(expect->suite) : std::nullopt),
                       evidence ? fmt::format("`{}`: {}", evidence->id, markdown_cell(evidence->message, 160)) : "-",
                       evidence ? "`" + evidence->reproduce + "`" : "-");
  }
  out += "\n";
}

}  // namespace harness::markdown
