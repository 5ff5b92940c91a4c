// What a challenge provides to the harness. Each challenge implements this
// in challenges/<name>/host/ and registers it with one line,
// HARNESS_REGISTER_CHALLENGE(Type); nothing else lists challenges.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/challenge_api/case_spec.h"
#include "harness/core/error_metrics.h"
#include "harness/core/tensor.h"
#include "harness/definitions/challenge_config.h"
#include "harness/results/results.h"

namespace harness {

class CaseContext;

class Challenge {
 public:
  virtual ~Challenge() = default;
  virtual std::string name() const = 0;
  virtual int abi_version() const = 0;
  // The full case matrix, in a fixed order.
  virtual std::vector<CaseSpec> cases() const = 0;
  // Runs one case through the context's primitives (ctx.call, ctx.time),
  // usually through run_stateless_case; reports a failure by throwing
  // VerdictException (ctx.fail).
  virtual void run_case(const CaseSpec& spec, CaseContext& ctx) const = 0;
  // The challenge's trusted answer to one op, written into `outputs` in the
  // ABI's types; returns the op's scalar results (e.g. a size it reports),
  // or an empty object. The negative controls use it ("another seed's
  // correct output", and the answers to queries); tests use it to show that
  // a right answer passes the checks.
  virtual nlohmann::json solve(const std::string& op, const nlohmann::json& scalars,
                               const std::map<std::string, TensorView>& inputs,
                               const std::map<std::string, void*>& outputs) const = 0;
  // Dimensions the challenge scores itself (memory, capacity), from its
  // cases' metrics; the generic ones come from harness/scoring.
  virtual std::map<std::string, DimensionScore> extra_dimensions(const EntryResult&) const { return {}; }

  const ChallengeConfig& config() const { return challenge_config(name()); }
  // challenge.json's tolerances that are element bounds ({"rtol",
  // "scale_atol", "float32_factor"}), by name.
  std::map<std::string, Tolerance> element_tolerances() const;
};

bool register_challenge(std::function<std::unique_ptr<Challenge>()> factory);
// Sorted by name.
const std::vector<std::unique_ptr<Challenge>>& all_challenges();
// Throws UsageError listing the known challenges.
const Challenge& find_challenge(const std::string& name);

}  // namespace harness

#define HARNESS_REGISTER_CHALLENGE(Type)                  \
  static const bool harness_challenge_registered_##Type = \
      ::harness::register_challenge([] { return std::make_unique<Type>(); })
