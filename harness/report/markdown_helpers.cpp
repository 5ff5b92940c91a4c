#include "harness/report/markdown_helpers.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <set>

#include "harness/core/format.h"
#include "harness/definitions/challenge_config.h"

namespace harness::markdown {

namespace {

const char* const kDimensionOrder[] = {"correctness", "edge_cases", "stability",   "performance",
                                       "memory",      "capacity",   "completeness"};

}  // namespace

nlohmann::json report_settings(const std::string& challenge) {
  try {
    return challenge_config(challenge).raw.value("report", nlohmann::json::object());
  } catch (const std::exception&) {
    return nlohmann::json::object();
  }
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

void header_row(std::string& out, const std::string& first, const std::vector<const EntryResult*>& columns,
                const std::string& alignment) {
  out += "| " + first + " |";
  for (const auto* e : columns) {
    const std::string& role = e->submission.role;
    out += fmt::format(" {}{} |", markdown_cell(e->submission.name),
                       role == "mutant" || role == "exploit" ? " (" + role + ")" : "");
  }
  out += "\n|---|";
  for (size_t i = 0; i < columns.size(); ++i) out += alignment + "|";
  out += "\n";
}

}  // namespace harness::markdown
