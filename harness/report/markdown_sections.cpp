#include "harness/report/markdown_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "harness/report/format.h"
#include "harness/results/verdict_counts.h"
#include "harness/runner/challenge_config.h"

namespace harness::markdown {

namespace {

constexpr size_t kMaxFailuresShown = 12;
const char* const kDimensionOrder[] = {"correctness", "edge_cases", "stability", "performance",
                                       "memory",      "capacity",   "completeness"};

// The challenge's "report" settings from its challenge.json, or {} for a
// challenge this harness does not know.
nlohmann::json report_settings(const std::string& challenge) {
  try {
    return challenge_config(challenge).raw.value("report", nlohmann::json::object());
  } catch (const std::exception&) {
    return nlohmann::json::object();
  }
}

const CaseResult* find_case(const EntryResult& e, const std::string& id) {
  for (const auto& c : e.cases) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::vector<std::string> case_ids(const Group& g, Suite suite) {
  std::vector<std::string> ids;
  for (const auto* e : g.ranked) {
    for (const auto& c : e->cases) {
      if (c.suite == suite && std::find(ids.begin(), ids.end(), c.id) == ids.end()) ids.push_back(c.id);
    }
  }
  return ids;
}

std::vector<std::string> dimension_names(const Group& g) {
  std::set<std::string> present;
  for (const auto* e : g.ranked) {
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

void header_row(std::string& out, const std::string& first, const Group& g, const std::string& alignment = "---:") {
  out += "| " + first + " |";
  for (const auto* e : g.ranked) out += fmt::format(" {} |", e->submission.name);
  out += "\n|---|";
  for (size_t i = 0; i < g.ranked.size(); ++i) out += alignment + "|";
  out += "\n";
}

void winner_line(std::string& out, const Group& g) {
  std::vector<const EntryResult*> ranked;
  for (const auto* e : g.ranked) {
    if (e->scores && e->scores->ranked) ranked.push_back(e);
  }
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

// One sentence per submission, every figure from the results: how many
// cases pass, what failed, and its best bandwidth.
void in_short(std::string& out, const Group& g) {
  const EntryResult* baseline = nullptr;
  for (const auto* e : g.ranked) {
    if (e->submission.role == "baseline") baseline = e;
  }
  out += "In short:\n\n";
  for (const auto* e : g.ranked) {
    size_t passed = 0, judged = 0;
    std::map<std::string, size_t> failed;
    const CaseResult* best = nullptr;
    for (const auto& c : e->cases) {
      if (c.verdict == Verdict::unsupported || c.verdict == Verdict::unavailable) continue;
      ++judged;
      if (c.verdict == Verdict::pass) ++passed;
      if (is_failure(c.verdict)) ++failed[std::string(verdict_name(c.verdict))];
      if (c.verdict == Verdict::pass && c.peak_fraction && (!best || *c.peak_fraction > *best->peak_fraction)) best = &c;
    }
    std::string sentence = fmt::format("- **{}** ({}) passes {} of {} cases", e->submission.name,
                                       e->submission.origin.empty() ? e->submission.role : e->submission.origin, passed, judged);
    if (e->build.status != "ok") sentence = fmt::format("- **{}** did not build ({})", e->submission.name, e->build.status);
    if (!failed.empty()) {
      std::string list;
      for (const auto& [verdict, n] : failed) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, verdict);
      sentence += fmt::format(" (failing: {})", list);
    }
    if (best && best->bandwidth) {
      sentence += fmt::format("; its best bandwidth is {} on `{}`, {} of the measured peak", format_bandwidth(*best->bandwidth),
                              best->id, format_percent(best->peak_fraction));
      const CaseResult* base = baseline && baseline != e ? find_case(*baseline, best->id) : nullptr;
      if (base && base->verdict == Verdict::pass && base->timing && best->timing) {
        sentence += fmt::format(", {:.1f}x the naive baseline", base->timing->summary.median / best->timing->summary.median);
      }
    }
    out += sentence + ".\n";
  }
  out += "\n";
}

std::string format_error(double value) { return value == 0 ? "0" : fmt::format("{:.2e}", value); }

}  // namespace

void summary(std::string& out, const Group& g) {
  if (g.ranked.empty()) return;
  header_row(out, "Dimension (weight)", g);
  for (const auto& dim : dimension_names(g)) {
    double weight = 0;
    for (const auto* e : g.ranked) {
      if (e->scores && e->scores->dimensions.count(dim)) weight = e->scores->dimensions.at(dim).weight;
    }
    out += fmt::format("| {} ({:.2f}) |", dim, weight);
    for (const auto* e : g.ranked) {
      const auto* d = e->scores && e->scores->dimensions.count(dim) ? &e->scores->dimensions.at(dim) : nullptr;
      out += d && d->measured ? fmt::format(" {:.1f} <br><sub>{}</sub> |", d->score, markdown_cell(d->detail, 80))
                              : " not measured |";
    }
    out += "\n";
  }
  out += "| **Overall** |";
  for (const auto* e : g.ranked) {
    out += e->scores ? fmt::format(" **{:.1f}**{} |", e->scores->overall, e->scores->capped ? " (capped)" : "") : " - |";
  }
  out += "\n| **Grade** |";
  for (const auto* e : g.ranked) out += e->scores ? fmt::format(" **{}** |", e->scores->grade) : " - |";
  out += "\n";
  std::set<std::pair<std::string, std::string>> review_rows;
  for (const auto* r : g.reviews) review_rows.emplace(r->dimension, r->reviewer);
  for (const auto& [dimension, reviewer] : review_rows) {
    out += fmt::format("| *reviewer: {}{}* |", dimension, reviewer.empty() ? "" : " (" + reviewer + ")");
    for (const auto* e : g.ranked) {
      const ReviewerScore* found = nullptr;
      for (const auto* r : g.reviews) {
        if (r->submission == e->submission.name && r->dimension == dimension && r->reviewer == reviewer) found = r;
      }
      out += found ? fmt::format(" *{:.0f}*{} |", found->score, found->note.empty() ? "" : " <br><sub>" + markdown_cell(found->note, 80) + "</sub>")
                   : " - |";
    }
    out += "\n";
  }
  out += "\n";
  if (!review_rows.empty()) {
    out += "Rows in italics are reviewer-assigned: shown for reference, never part of the measured overall.\n\n";
  }
  winner_line(out, g);
  in_short(out, g);
  bool any_note = false;
  for (const auto* e : g.ranked) {
    if (!e->scores) continue;
    for (const auto& n : e->scores->notes) {
      out += fmt::format("- {}: {}\n", e->submission.name, n);
      any_note = true;
    }
  }
  if (any_note) out += "\n";
}

void failures(std::string& out, const Group& g, Suite suite, const char* title) {
  if (case_ids(g, suite).empty()) return;
  out += fmt::format("#### {}\n\n", title);
  for (const auto* e : g.ranked) {
    std::vector<const CaseResult*> failing;
    for (const auto& c : e->cases) {
      if (c.suite == suite && (is_failure(c.verdict) || c.verdict == Verdict::harness_error)) failing.push_back(&c);
    }
    out += fmt::format("- **{}**: {}\n", e->submission.name, verdict_counts(*e, suite));
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
      out += fmt::format("\n  ... and {} more (every one is in the results file).\n", failing.size() - kMaxFailuresShown);
    }
    out += "\n";
  }
  out += "\n";
}

// The stability table's columns: the ranked submissions, then the mutants
// that ran stability cases (a run with --with-mutants), labelled as such, so
// that a numerically fragile mutant is seen failing beside the ones that hold.
std::vector<const EntryResult*> stability_columns(const Group& g) {
  std::vector<const EntryResult*> columns = g.ranked;
  for (const auto* e : g.mutants) {
    if (e->submission.role != "mutant") continue;
    const bool ran = std::any_of(e->cases.begin(), e->cases.end(), [](const CaseResult& c) {
      return c.suite == Suite::stability && c.verdict != Verdict::build_failed;
    });
    if (ran) columns.push_back(e);
  }
  return columns;
}

void stability(std::string& out, const Group& g) {
  const auto ids = case_ids(g, Suite::stability);
  if (ids.empty()) return;
  const nlohmann::json settings = report_settings(g.challenge);
  const std::string metric = settings.value("error_metric", "");
  const std::vector<const EntryResult*> columns = stability_columns(g);
  out += "#### Stability\n\n";
  if (!metric.empty()) {
    out += fmt::format("Worst {} per case (`{}`), and the verdict.\n\n", settings.value("error_label", metric), metric);
  }
  out += "| Case |";
  for (const auto* e : columns) {
    out += fmt::format(" {}{} |", e->submission.name, e->submission.role == "mutant" ? " (mutant)" : "");
  }
  out += "\n|---|";
  for (size_t i = 0; i < columns.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& id : ids) {
    out += fmt::format("| `{}` |", id);
    for (const auto* e : columns) {
      const CaseResult* c = find_case(*e, id);
      if (!c) {
        out += " - |";
        continue;
      }
      const bool has_metric = !metric.empty() && c->metrics.contains(metric) && c->metrics[metric].is_number();
      out += has_metric ? fmt::format(" {} <br>{} |", format_error(c->metrics[metric].get<double>()), verdict_name(c->verdict))
                        : fmt::format(" {} |", verdict_name(c->verdict));
    }
    out += "\n";
  }
  out += "\n";
  // Error against a numeric parameter (e.g. the data's offset), when the
  // challenge names one: a line per submission.
  const std::string param = settings.contains("stability_series") ? settings["stability_series"].value("param", "") : "";
  if (param.empty() || metric.empty()) return;
  std::vector<std::pair<double, std::string>> points;
  for (const auto& id : ids) {
    for (const auto* e : columns) {
      const CaseResult* c = find_case(*e, id);
      if (c && c->params.contains(param) && c->params[param].is_number()) {
        points.emplace_back(c->params[param].get<double>(), id);
        break;
      }
    }
  }
  std::sort(points.begin(), points.end());
  if (points.size() < 2) return;
  out += fmt::format("```mermaid\nxychart-beta\n    title \"{} against {}\"\n    x-axis [", metric,
                     settings["stability_series"].value("label", param));
  for (size_t i = 0; i < points.size(); ++i) out += fmt::format("{}\"{:g}\"", i ? ", " : "", points[i].first);
  out += fmt::format("]\n    y-axis \"log10 {}\"\n", metric);
  for (const auto* e : columns) {
    out += "    line [";
    for (size_t i = 0; i < points.size(); ++i) {
      const CaseResult* c = find_case(*e, points[i].second);
      const double v = c && c->metrics.contains(metric) && c->metrics[metric].is_number() ? c->metrics[metric].get<double>() : 0;
      out += fmt::format("{}{:.2f}", i ? ", " : "", v > 0 ? std::min(std::log10(v), 10.0) : -20.0);
    }
    out += "]\n";
  }
  out += "```\n\nOne line per submission, in the order of the table's columns (log10 of the error; -20 stands for 0, 10 for 1e10 or more, NaN and inf included).\n\n";
}

void performance(std::string& out, const Group& g) {
  const auto ids = case_ids(g, Suite::perf);
  if (ids.empty()) return;
  out += "#### Performance\n\n";
  if (g.device && g.device->peak) {
    out += fmt::format("Measured peak of {}: {} ({}), read-only {}; fractions below are of the copy peak.\n\n", g.device->id,
                       format_bandwidth(g.device->peak->copy_bytes_per_second), g.device->peak->method,
                       format_bandwidth(g.device->peak->read_bytes_per_second));
  }
  const EntryResult* baseline = nullptr;
  for (const auto* e : g.ranked) {
    if (e->submission.role == "baseline") baseline = e;
  }
  out += "| Case | Bytes moved |";
  for (const auto* e : g.ranked) out += fmt::format(" {} |", e->submission.name);
  out += "\n|---|---:|";
  for (size_t i = 0; i < g.ranked.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& id : ids) {
    double bytes = 0;
    std::string row;
    const CaseResult* base = baseline ? find_case(*baseline, id) : nullptr;
    for (const auto* e : g.ranked) {
      const CaseResult* c = find_case(*e, id);
      if (!c) {
        row += " - |";
        continue;
      }
      bytes = c->bytes_moved;
      if (c->verdict != Verdict::pass || !c->timing || !c->bandwidth) {
        row += fmt::format(" {} |", verdict_name(c->verdict));
        continue;
      }
      std::string speedup;
      if (base && base != c && base->verdict == Verdict::pass && base->timing) {
        speedup = fmt::format(", {:.1f}x the baseline", base->timing->summary.median / c->timing->summary.median);
      }
      row += fmt::format(" {} <br>{} ({} of peak{}) <br><sub>spread {:.1f}%, n={}</sub> |",
                         format_duration_ns(c->timing->summary.median), format_bandwidth(*c->bandwidth),
                         format_percent(c->peak_fraction), speedup, 100 * c->timing->summary.relative_spread,
                         c->timing->summary.count);
    }
    out += fmt::format("| `{}` | {} |{}\n", id, format_bytes(bytes), row);
  }
  out += "\nMedian time per call; bandwidth = bytes moved (the byte model) / median; spread = (p90 - p10) / median.\n\n";
  for (const auto& id : ids) {
    std::vector<std::pair<std::string, double>> bars;
    for (const auto* e : g.ranked) {
      const CaseResult* c = find_case(*e, id);
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

void series(std::string& out, const Group& g) {
  const nlohmann::json settings = report_settings(g.challenge);
  if (!settings.contains("series_charts")) return;
  for (const auto& chart : settings["series_charts"]) {
    const std::string prefix = chart.value("case", "");
    for (const auto& metric_value : chart.value("metrics", nlohmann::json::array())) {
      const std::string metric = metric_value.get<std::string>();
      // One line per submission that completed the workload; a workload cut
      // short by a failure has fewer steps and is left out of the chart.
      std::vector<std::pair<std::string, std::vector<double>>> lines;
      std::string case_id;
      size_t longest = 0;
      for (const auto* e : g.ranked) {
        for (const auto& c : e->cases) {
          if (c.id.rfind(prefix, 0) != 0 || !c.metrics.contains(metric) || !c.metrics[metric].is_array()) continue;
          case_id = c.id;
          lines.emplace_back(e->submission.name, c.metrics[metric].get<std::vector<double>>());
          longest = std::max(longest, lines.back().second.size());
        }
      }
      lines.erase(std::remove_if(lines.begin(), lines.end(), [&](const auto& l) { return l.second.size() != longest; }), lines.end());
      if (lines.empty() || longest < 2) continue;
      out += fmt::format("```mermaid\nxychart-beta\n    title \"{}: {}\"\n    x-axis \"step\" 1 --> {}\n    y-axis \"{}\"\n",
                         chart.value("title", prefix), metric, longest, metric);
      std::string names;
      for (const auto& [name, values] : lines) {
        out += "    line [";
        for (size_t i = 0; i < values.size(); ++i) out += fmt::format("{}{:g}", i ? ", " : "", values[i]);
        out += "]\n";
        names += (names.empty() ? "" : ", ") + name;
      }
      out += fmt::format("```\n\n`{}`, one line per submission: {}.\n\n", case_id, names);
    }
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
    lines += fmt::format("- **{}** declares {} case(s) unsupported: {}\n", e->submission.name, unsupported.size(), list);
  }
  if (lines.empty()) return;
  out += "#### Completeness\n\n" + lines + "\n";
}

void mutants(std::string& out, const Group& g) {
  if (g.mutants.empty()) return;
  out += "#### Mutants and negative controls (never ranked)\n\n"
         "| Submission | Must get | Got in that suite | Evidence | Reproduce |\n|---|---|---|---|---|\n";
  for (const auto* e : g.mutants) {
    const auto& expect = e->submission.expect;
    const std::string expected = expect ? fmt::format("{} in {}{}", verdict_name(expect->verdict), suite_name(expect->suite),
                                                      expect->every_case ? " (every case)" : "")
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
    out += fmt::format("| {} | {} | {} | {} | {} |\n", e->submission.name, expected,
                       verdict_counts(*e, expect ? std::optional<Suite>(expect->suite) : std::nullopt),
                       evidence ? fmt::format("`{}`: {}", evidence->id, markdown_cell(evidence->message, 160)) : "-",
                       evidence ? "`" + evidence->reproduce + "`" : "-");
  }
  out += "\n";
}

}  // namespace harness::markdown
