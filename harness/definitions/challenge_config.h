// A challenge's challenge.json (weights, tolerances, performance scoring),
// compiled into the harness by cmake/HarnessChallenges.cmake.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "harness/definitions/op_declaration.h"

namespace harness {

struct PerformanceScoring {
  // Full marks for a perf case at this fraction of the measured peak...
  double full_marks_peak_fraction = 0.8;
  // ...and for this speedup over the challenge's naive baseline;
  double full_marks_speedup = 4.0;
  // the bandwidth part's share of the performance score (the rest is speedup).
  double bandwidth_share = 0.7;
};

struct ChallengeConfig {
  std::string name;
  std::string title;
  // Dimension name -> weight in the overall score. Dimensions: correctness,
  // edge_cases, stability, performance, completeness, and any the challenge
  // computes itself (memory, capacity).
  std::map<std::string, double> weights;
  PerformanceScoring performance;
  // Device kind -> the folder of the naive baseline, relative to the
  // project's root: the only submission that may take the role "baseline"
  // (every entry's speedup is measured against it).
  std::map<std::string, std::string> baselines;
  nlohmann::json tolerances = nlohmann::json::object();
  ChallengeOps ops;  // "abi" and "ops": the C ABI's functions, declared once
  nlohmann::json raw;
};

bool register_challenge_config(const char* name, const char* json_text);
// Throws HarnessError when the challenge has no (valid) challenge.json.
const ChallengeConfig& challenge_config(const std::string& name);
// The challenge's config, or nullptr for a name no challenge has.
const ChallengeConfig* find_challenge_config(const std::string& name);

}  // namespace harness

#define HARNESS_CONFIG_CONCAT_INNER(a, b) a##b
#define HARNESS_CONFIG_CONCAT(a, b) HARNESS_CONFIG_CONCAT_INNER(a, b)
// __COUNTER__, not __LINE__: two challenges' generated files, compiled in
// one unit (the unity build), register on the same line.
#define HARNESS_REGISTER_CHALLENGE_CONFIG(name, text)                                \
  static const bool HARNESS_CONFIG_CONCAT(harness_config_registered_, __COUNTER__) = \
      ::harness::register_challenge_config(name, text)
