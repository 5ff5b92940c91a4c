#include "harness/definitions/challenge_config.h"

#include "harness/core/error.h"

namespace harness {

namespace {

std::map<std::string, std::string>& texts() {
  static std::map<std::string, std::string> registry;
  return registry;
}

ChallengeConfig parse(const std::string& name, const std::string& text) {
  ChallengeConfig config;
  config.name = name;
  try {
    config.raw = nlohmann::json::parse(text);
    config.title = config.raw.value("title", name);
    for (const auto& [dimension, weight] : config.raw.at("weights").items()) {
      config.weights[dimension] = weight.get<double>();
    }
    if (config.raw.contains("performance")) {
      const auto& p = config.raw["performance"];
      config.performance.full_marks_peak_fraction =
          p.value("full_marks_peak_fraction", config.performance.full_marks_peak_fraction);
      config.performance.full_marks_speedup = p.value("full_marks_speedup", config.performance.full_marks_speedup);
      config.performance.bandwidth_share = p.value("bandwidth_share", config.performance.bandwidth_share);
    }
    config.tolerances = config.raw.value("tolerances", nlohmann::json::object());
    config.baselines = config.raw.value("baselines", std::map<std::string, std::string>{});
  } catch (const nlohmann::json::exception& e) {
    HARNESS_FAIL("challenges/{}/challenge.json: {}", name, e.what());
  }
  HARNESS_CHECK(!config.weights.empty(), "challenges/{}/challenge.json: no weights", name);
  config.ops = parse_challenge_ops(name, config.raw);
  return config;
}

}  // namespace

bool register_challenge_config(const char* name, const char* json_text) {
  texts()[name] = json_text;
  return true;
}

const ChallengeConfig& challenge_config(const std::string& name) {
  static std::map<std::string, ChallengeConfig> parsed;
  auto it = parsed.find(name);
  if (it != parsed.end()) return it->second;
  auto text = texts().find(name);
  HARNESS_CHECK(text != texts().end(), "challenge '{}' has no challenge.json compiled in", name);
  return parsed.emplace(name, parse(name, text->second)).first->second;
}

const ChallengeConfig* find_challenge_config(const std::string& name) {
  return texts().count(name) ? &challenge_config(name) : nullptr;
}

}  // namespace harness
