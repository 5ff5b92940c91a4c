// The report's stability section (errors against the data's conditioning,
// mutants beside the ranked submissions) and its charts of per-step series.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "harness/core/format.h"
#include "harness/report/markdown_helpers.h"
#include "harness/report/markdown_sections.h"

namespace harness::markdown {

namespace {

// An error metric in a table cell.
std::string format_error(double value) { return value == 0 ? "0" : fmt::format("{:.2e}", value); }

}  // namespace

namespace {

// The stability table's columns: the ranked submissions, then the mutants
// that ran stability cases (a run with --with-mutants), labelled as such, so
// that a numerically fragile mutant is seen failing beside the ones that hold.
std::vector<const EntryResult*> stability_columns(const Group& g) {
  std::vector<const EntryResult*> columns = g.ranked;
  for (const auto* e : g.mutants) {
    if (e->submission.role != "mutant" && e->submission.role != "float32-control") continue;
    const bool ran = std::any_of(e->cases.begin(), e->cases.end(), [](const CaseResult& c) {
      return c.suite == Suite::stability && c.verdict != Verdict::build_failed;
    });
    if (ran) columns.push_back(e);
  }
  return columns;
}

}  // namespace

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
  header_row(out, "Case", columns);
  for (const auto& id : ids) {
    out += fmt::format("| `{}` |", id);
    for (const auto* e : columns) {
      const CaseResult* c = e->find_case(id);
      if (!c) {
        out += " - |";
        continue;
      }
      const bool has_metric = !metric.empty() && c->metrics.contains(metric) && c->metrics[metric].is_number();
      out += has_metric
                 ? fmt::format(" {} <br>{} |", format_error(c->metrics[metric].get<double>()), verdict_name(c->verdict))
                 : fmt::format(" {} |", verdict_name(c->verdict));
    }
    out += "\n";
  }
  // The precision tier each reached (scoring.cpp, graded_stability), where
  // the challenge's checks measure it.
  std::vector<std::string> tiers;
  for (const auto* e : columns) {
    std::string tier;
    if (e->scores) {
      const auto it = e->scores->dimensions.find("stability");
      if (it != e->scores->dimensions.end()) {
        const auto cut = it->second.detail.find("; ");
        tier = cut == std::string::npos ? "" : it->second.detail.substr(cut + 2);
      }
    }
    tiers.push_back(tier);
  }
  if (std::any_of(tiers.begin(), tiers.end(), [](const std::string& t) { return !t.empty(); })) {
    out += "| precision |";
    for (const auto& tier : tiers) out += fmt::format(" {} |", tier.empty() ? "-" : markdown_cell(tier));
    out +=
        "\n\nPrecision loss: where a case's error sits between the float64 ideal (0: the rounding of the result "
        "itself) and the bound of sound float32 arithmetic on that input (1), on a log scale; beyond 1 is "
        "`wrong_answer`. The stability score gives 100 at 0 and 50 at 1.\n";
  }
  out += "\n";
  // Error against a numeric parameter (e.g. the data's offset), when the
  // challenge names one: a line per submission.
  const std::string param =
      settings.contains("stability_series") ? settings["stability_series"].value("param", "") : "";
  if (param.empty() || metric.empty()) return;
  std::vector<std::pair<double, std::string>> points;
  for (const auto& id : ids) {
    for (const auto* e : columns) {
      const CaseResult* c = e->find_case(id);
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
      const CaseResult* c = e->find_case(points[i].second);
      const double v =
          c && c->metrics.contains(metric) && c->metrics[metric].is_number() ? c->metrics[metric].get<double>() : 0;
      out += fmt::format("{}{:.2f}", i ? ", " : "", v > 0 ? std::min(std::log10(v), 10.0) : -20.0);
    }
    out += "]\n";
  }
  out +=
      "```\n\nOne line per submission, in the order of the table's columns (log10 of the error; -20 stands for 0, 10 "
      "for 1e10 or more, NaN and inf included).\n\n";
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
      lines.erase(std::remove_if(lines.begin(), lines.end(), [&](const auto& l) { return l.second.size() != longest; }),
                  lines.end());
      if (lines.empty() || longest < 2) continue;
      out += fmt::format(
          "```mermaid\nxychart-beta\n    title \"{}: {}\"\n    x-axis \"step\" 1 --> {}\n    y-axis \"{}\"\n",
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

}  // namespace harness::markdown
