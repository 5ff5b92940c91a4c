#include "harness/results/verdict_counts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace harness {

std::string verdict_counts(const EntryResult& entry, std::optional<Suite> suite) {
  std::map<std::string, size_t> counts;
  for (const auto& c : entry.cases) {
    if (!suite || c.suite == *suite) ++counts[std::string(verdict_name(c.verdict))];
  }
  std::string text;
  for (const auto& [verdict, n] : counts) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", n, verdict);
  return text.empty() ? "no cases" : text;
}

bool ran_any_case(const EntryResult& entry) {
  return std::any_of(entry.cases.begin(), entry.cases.end(),
                     [](const CaseResult& c) { return c.verdict != Verdict::unavailable; });
}

}  // namespace harness
