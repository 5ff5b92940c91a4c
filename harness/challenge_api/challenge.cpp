#include "harness/challenge_api/challenge.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "harness/core/error.h"

namespace harness {

namespace {
std::vector<std::function<std::unique_ptr<Challenge>()>>& factories() {
  static std::vector<std::function<std::unique_ptr<Challenge>()>> list;
  return list;
}
}  // namespace

std::map<std::string, Tolerance> Challenge::element_tolerances() const {
  std::map<std::string, Tolerance> tolerances;
  for (const auto& [key, value] : config().tolerances.items()) {
    if (!value.contains("rtol") || !value.contains("scale_atol")) continue;
    tolerances[key] = Tolerance{value.at("rtol").get<double>(), value.at("scale_atol").get<double>(),
                                value.value("float32_factor", 0.0)};
  }
  return tolerances;
}

bool register_challenge(std::function<std::unique_ptr<Challenge>()> factory) {
  factories().push_back(std::move(factory));
  return true;
}

const std::vector<std::unique_ptr<Challenge>>& all_challenges() {
  static const std::vector<std::unique_ptr<Challenge>> challenges = [] {
    std::vector<std::unique_ptr<Challenge>> list;
    for (auto& make : factories()) list.push_back(make());
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a->name() < b->name(); });
    return list;
  }();
  return challenges;
}

const Challenge& find_challenge(const std::string& name) {
  std::vector<std::string> known;
  for (const auto& c : all_challenges()) {
    if (c->name() == name) return *c;
    known.push_back(c->name());
  }
  throw UsageError(fmt::format("unknown challenge '{}' (known: {})", name, fmt::join(known, ", ")));
}

}  // namespace harness
