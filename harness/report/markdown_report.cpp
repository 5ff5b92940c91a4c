#include "harness/report/markdown_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "harness/report/format.h"
#include "harness/results/verdict_counts.h"

namespace harness {

namespace {

constexpr size_t kMaxFailuresShown = 12;
const char* const kDimensionOrder[] = {"correctness", "edge_cases", "stability", "performance", "memory", "capacity", "completeness"};

bool is_mutant_like(const EntryResult& e) { return e.submission.role == "mutant" || e.submission.role == "control"; }

std::vector<std::string> dimension_names(const std::vector<const EntryResult*>& entries) {
  std::set<std::string> present;
  for (const auto* e : entries) {
    if (!e->scores) continue;
    for (const auto& [name, d] : e->scores->dimensions) {
      if (d.weight > 0 || d.measured) present.insert(name);
    }
  }
  std::vector<std::string> names;
  for (const char* n : kDimensionOrder) {
    if (present.erase(n)) names.push_back(n);
  }
  names.insert(names.end(), present.begin(), present.end());
  return names;
}

void summary_table(std::string& out, const std::vector<const EntryResult*>& ranked) {
  const auto dims = dimension_names(ranked);
  out += "| Dimension (weight) |";
  for (const auto* e : ranked) out += fmt::format(" {} |", e->submission.name);
  out += "\n|---|";
  for (size_t i = 0; i < ranked.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& dim : dims) {
    double weight = 0;
    for (const auto* e : ranked) {
      if (e->scores && e->scores->dimensions.count(dim)) weight = e->scores->dimensions.at(dim).weight;
    }
    out += fmt::format("| {} ({:.2f}) |", dim, weight);
    for (const auto* e : ranked) {
      const auto* d = e->scores && e->scores->dimensions.count(dim) ? &e->scores->dimensions.at(dim) : nullptr;
      out += d && d->measured ? fmt::format(" {:.1f} <br><sub>{}</sub> |", d->score, markdown_cell(d->detail, 80)) : " not measured |";
    }
    out += "\n";
  }
  out += "| **Overall** |";
  for (const auto* e : ranked) out += e->scores ? fmt::format(" **{:.1f}**{} |", e->scores->overall, e->scores->capped ? " (capped)" : "") : " - |";
  out += "\n| **Grade** |";
  for (const auto* e : ranked) out += e->scores ? fmt::format(" **{}** |", e->scores->grade) : " - |";
  out += "\n\n";
}

void winner_line(std::string& out, std::vector<const EntryResult*> ranked) {
  ranked.erase(std::remove_if(ranked.begin(), ranked.end(), [](const EntryResult* e) { return !e->scores || !e->scores->ranked; }),
               ranked.end());
  if (ranked.empty()) {
    out += "No ranked submission on this device.\n\n";
    return;
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const EntryResult* a, const EntryResult* b) { return a->scores->overall > b->scores->overall; });
  const auto* first = ranked[0];
  if (ranked.size() == 1) {
    out += fmt::format("**{}** is the only ranked submission: {:.1f} ({}).\n\n", first->submission.name,
                       first->scores->overall, first->scores->grade);
    return;
  }
  const double margin = first->scores->overall - ranked[1]->scores->overall;
  if (margin < 0.05) {
    out += fmt::format("**No winner:** {} and {} tie at {:.1f} ({}).\n\n", first->submission.name,
                       ranked[1]->submission.name, first->scores->overall, first->scores->grade);
    return;
  }
  out += fmt::format("**Winner: {}** with {:.1f} ({}), ahead of {} ({:.1f}, {}) by **{:.1f} points**.\n\n",
                     first->submission.name, first->scores->overall, first->scores->grade, ranked[1]->submission.name,
                     ranked[1]->scores->overall, ranked[1]->scores->grade, margin);
}

void notes(std::string& out, const std::vector<const EntryResult*>& entries) {
  bool any = false;
  for (const auto* e : entries) {
    if (!e->scores || e->scores->notes.empty()) continue;
    for (const auto& n : e->scores->notes) {
      out += fmt::format("- {}: {}\n", e->submission.name, n);
      any = true;
    }
  }
  if (any) out += "\n";
}

void failures(std::string& out, const std::vector<const EntryResult*>& entries) {
  out += "#### Correctness, edge cases and stability\n\n";
  for (const auto* e : entries) {
    std::vector<const CaseResult*> failing;
    for (const auto& c : e->cases) {
      if (is_failure(c.verdict) || c.verdict == Verdict::harness_error) failing.push_back(&c);
    }
    out += fmt::format("- **{}**: {}\n", e->submission.name, verdict_counts(*e, std::nullopt));
    if (e->build.status != "ok") {
      out += fmt::format("  - build {}: {}\n", e->build.status, markdown_cell(e->build.reason));
      if (!e->build.log_excerpt.empty()) out += fmt::format("\n```\n{}```\n\n", e->build.log_excerpt);
      continue;
    }
    if (failing.empty()) continue;
    out += "\n  | Case | Verdict | What went wrong | Reproduce |\n  |---|---|---|---|\n";
    for (size_t i = 0; i < failing.size() && i < kMaxFailuresShown; ++i) {
      const auto* c = failing[i];
      out += fmt::format("  | `{}` | {} | {} | `{}` |\n", c->id, verdict_name(c->verdict), markdown_cell(c->message),
                         c->reproduce);
    }
    if (failing.size() > kMaxFailuresShown) {
      out += fmt::format("\n  ... and {} more failing cases (all in results.json).\n", failing.size() - kMaxFailuresShown);
    }
    out += "\n";
  }
  out += "\n";
}

void performance(std::string& out, const std::vector<const EntryResult*>& entries, const DeviceInfo* device) {
  std::vector<std::string> perf_ids;
  for (const auto* e : entries) {
    for (const auto& c : e->cases) {
      if (c.suite == Suite::perf && std::find(perf_ids.begin(), perf_ids.end(), c.id) == perf_ids.end()) perf_ids.push_back(c.id);
    }
  }
  if (perf_ids.empty()) return;
  out += "#### Performance\n\n";
  if (device && device->peak) {
    out += fmt::format("Measured peak of {}: {} ({}), read-only {}; fractions below are of the copy peak.\n\n", device->id,
                       format_bandwidth(device->peak->copy_bytes_per_second), device->peak->method,
                       format_bandwidth(device->peak->read_bytes_per_second));
  }
  out += "| Case | Bytes moved |";
  for (const auto* e : entries) out += fmt::format(" {} |", e->submission.name);
  out += "\n|---|---:|";
  for (size_t i = 0; i < entries.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& id : perf_ids) {
    double bytes = 0;
    std::string row;
    for (const auto* e : entries) {
      const CaseResult* c = nullptr;
      for (const auto& x : e->cases) {
        if (x.id == id) c = &x;
      }
      if (!c) {
        row += " - |";
        continue;
      }
      bytes = c->bytes_moved;
      if (c->verdict != Verdict::pass || !c->timing || !c->bandwidth) {
        row += fmt::format(" {} |", verdict_name(c->verdict));
        continue;
      }
      row += fmt::format(" {} <br>{} ({} of peak) <br><sub>spread {:.1f}%, n={}</sub> |", format_duration_ns(c->timing->summary.median),
                         format_bandwidth(*c->bandwidth), format_percent(c->peak_fraction),
                         100 * c->timing->summary.relative_spread, c->timing->summary.count);
    }
    out += fmt::format("| `{}` | {} |{}\n", id, format_bytes(bytes), row);
  }
  out += "\nMedian time per call; bandwidth = bytes moved (the byte model) / median.\n\n";

  // A bar chart of the first perf case: bandwidth per submission.
  const std::string& headline = perf_ids.front();
  std::vector<std::pair<std::string, double>> bars;
  for (const auto* e : entries) {
    for (const auto& c : e->cases) {
      if (c.id == headline && c.verdict == Verdict::pass && c.bandwidth) bars.emplace_back(e->submission.name, *c.bandwidth / 1e9);
    }
  }
  if (bars.size() >= 1) {
    out += "```mermaid\nxychart-beta\n";
    out += fmt::format("    title \"{} (GB/s)\"\n    x-axis [", headline);
    for (size_t i = 0; i < bars.size(); ++i) out += fmt::format("{}\"{}\"", i ? ", " : "", bars[i].first);
    out += "]\n    y-axis \"GB/s\"\n    bar [";
    for (size_t i = 0; i < bars.size(); ++i) out += fmt::format("{}{:.2f}", i ? ", " : "", bars[i].second);
    out += "]\n```\n\n";
  }
}

// Evidence for a mutant: the first case that got the declared verdict, or
// the first failing one when none did.
const CaseResult* mutant_evidence(const EntryResult& e) {
  const CaseResult* failing = nullptr;
  for (const auto& c : e.cases) {
    if (e.submission.expect && c.suite == e.submission.expect->suite && c.verdict == e.submission.expect->verdict) return &c;
    if (!failing && is_failure(c.verdict)) failing = &c;
  }
  return failing;
}

void mutant_table(std::string& out, const std::vector<const EntryResult*>& mutants) {
  if (mutants.empty()) return;
  out += "#### Mutants and negative controls (never ranked)\n\n"
         "| Submission | Must get | Got in that suite | Evidence | Reproduce |\n|---|---|---|---|---|\n";
  for (const auto* e : mutants) {
    const std::string expected = e->submission.expect
                                     ? fmt::format("{} in {}{}", verdict_name(e->submission.expect->verdict),
                                                   suite_name(e->submission.expect->suite),
                                                   e->submission.expect->every_case ? " (every case)" : "")
                                     : "-";
    const std::string got = e->submission.expect ? verdict_counts(*e, e->submission.expect->suite) : verdict_counts(*e, std::nullopt);
    const CaseResult* evidence = mutant_evidence(*e);
    const std::string what = evidence ? fmt::format("`{}`: {}", evidence->id, markdown_cell(evidence->message, 160)) : "-";
    out += fmt::format("| {} | {} | {} | {} | {} |\n", e->submission.name, expected, got, what,
                       evidence ? "`" + evidence->reproduce + "`" : "-");
  }
  out += "\n";
}

void environment(std::string& out, const RunResults& r) {
  out += "## Environment\n\n";
  out += fmt::format("- Host: {} ({}), {} logical cores, {} memory, {}\n", r.run.host.cpu_model, r.run.host.hostname,
                     r.run.host.logical_cores, format_bytes(static_cast<double>(r.run.host.memory_bytes)), r.run.host.os);
  out += "\n| Device | Name | Units | Memory | Cache | Copy peak | Read peak | Ceiling | Details |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& d : r.devices) {
    if (!d.available) {
      out += fmt::format("| {} | not available | | | | | | | {} |\n", d.id, markdown_cell(d.unavailable_reason));
      continue;
    }
    std::string details = d.kind == "cuda" ? fmt::format("sm {}, driver {}, runtime {}", d.compute_capability, d.driver_version, d.runtime_version) : "";
    if (d.peak) details += fmt::format("{}peak by {}", details.empty() ? "" : "; ", d.peak->method);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", d.id, d.name, d.compute_units,
                       format_bytes(static_cast<double>(d.memory_bytes)), format_bytes(static_cast<double>(d.cache_bytes)),
                       d.peak ? format_bandwidth(d.peak->copy_bytes_per_second) : "-",
                       d.peak ? format_bandwidth(d.peak->read_bytes_per_second) : "-",
                       d.peak ? format_bandwidth(d.peak->ceiling_bytes_per_second()) : "-", details);
  }
  out += "\n";
}

}  // namespace

std::string render_markdown(const RunResults& r) {
  std::string out = "# Kernel harness report\n\n";
  out += fmt::format("Run of {} (commit `{}`), finished {}, seed {}.\n\n", r.run.started, r.run.git_commit,
                     r.run.finished.empty() ? "(not finished)" : r.run.finished, r.run.seed);
  if (!r.run.complete) out += "> **This run did not complete**: the results below are what it measured before it stopped.\n\n";
  out += fmt::format("Command: `{}`\n\n", r.run.command_line);

  std::vector<std::string> challenges;
  for (const auto& e : r.entries) {
    if (std::find(challenges.begin(), challenges.end(), e.challenge) == challenges.end()) challenges.push_back(e.challenge);
  }
  for (const auto& challenge : challenges) {
    out += fmt::format("## {}\n\n", challenge);
    std::vector<std::string> devices;
    for (const auto& e : r.entries) {
      if (e.challenge == challenge && std::find(devices.begin(), devices.end(), e.device) == devices.end()) devices.push_back(e.device);
    }
    for (const auto& device_id : devices) {
      const DeviceInfo* device = r.device(device_id);
      out += fmt::format("### {} on {}{}\n\n", challenge, device_id, device ? " (" + device->name + ")" : "");
      std::vector<const EntryResult*> ranked, mutants;
      for (const auto& e : r.entries) {
        if (e.challenge != challenge || e.device != device_id) continue;
        (is_mutant_like(e) ? mutants : ranked).push_back(&e);
      }
      if (!ranked.empty()) {
        summary_table(out, ranked);
        winner_line(out, ranked);
        notes(out, ranked);
        failures(out, ranked);
        performance(out, ranked, device);
      }
      mutant_table(out, mutants);
    }
  }
  environment(out, r);
  out += "## Reproduce\n\n";
  out += fmt::format("The whole run: `{}`\n\n", r.run.command_line);
  out += "Every failing case above lists the command that re-runs it alone with the same inputs.\n";
  return out;
}

}  // namespace harness
