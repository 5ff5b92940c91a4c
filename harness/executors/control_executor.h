// The negative controls: trivial answers that a trustworthy checker must
// reject on every core case of every challenge. They run in process (they are
// the harness's own code) through the same Executor interface, so they meet
// exactly the checks a submission meets.
#pragma once

#include <string>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "harness/challenge_api/executor.h"

namespace harness {

enum class ControlKind {
  zeros,       // every output element 0
  constant,    // every output element 1
  input_copy,  // the bytes of the first input, repeated into every output
  other_seed,  // the correct answer for other inputs of the same shape
};

std::vector<ControlKind> all_controls();
std::string control_name(ControlKind kind);  // "control-zeros", ...
std::string control_description(ControlKind kind);

class ControlExecutor : public Executor {
 public:
  ControlExecutor(ControlKind kind, const Challenge& challenge);

  protocol::CallReply call(const std::string& op, const nlohmann::json& scalars, const std::vector<Binding>& tensors,
                           double timeout_s) override;
  protocol::TimeReply time(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<std::vector<Binding>>& sets, const protocol::TimingPolicy& policy,
                           double timeout_s, const FreshInputs& fresh) override;
  void release(const SharedTensor&) override {}
  std::string drain_output(size_t) override { return ""; }
  std::string device_clock() const override { return "cpu-monotonic"; }

 private:
  // Fills the outputs; returns the op's scalar results.
  nlohmann::json answer(const std::string& op, const nlohmann::json& scalars, const std::vector<Binding>& tensors);

  ControlKind kind_;
  const Challenge& challenge_;
};

}  // namespace harness
