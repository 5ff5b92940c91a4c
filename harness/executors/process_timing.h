// A timing of a process submission: every call a request of its own
// (run_timing_loop), each set's inputs moved into the process's sight only as
// their call goes out (protocol 1: renamed into its scratch folder; protocol
// 2: copied into its twins), its outputs read as it replies. A call is timed
// by the harness's clock from its request to its reply, unless the process
// (protocol 2) claims the time of its timed calls: then the claims are used,
// witnessed by that clock as a compiled worker's are.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/challenge_api/executor.h"
#include "harness/timing/timing_loop.h"

namespace harness {

class ProcessExecutor;

class ProcessTiming {
 public:
  ProcessTiming(ProcessExecutor& process, const std::string& op, const nlohmann::json& scalars,
                const std::vector<std::vector<Binding>>& sets, double timeout_s);
  protocol::TimeReply run(const protocol::TimingPolicy& policy, const FreshInputs& fresh);

 private:
  // Every set's inputs, written where the process cannot see them.
  void write_inputs();
  TimedCall call(size_t set);
  // Protocol 2: the set's buffers copied into their twins and back around
  // its request; without fresh inputs its outputs poisoned first and
  // checked at the reply, as protocol 1 deletes and reads their files.
  TimedCall call_in_twins(size_t set);
  TimedCall exchange(size_t set);
  // The claim of a timed reply ({"elapsed_ns", "host_ns"}), if it made one.
  std::optional<TimedCall> claim_of(const nlohmann::json& answer) const;
  // With claims, the requests the witness judges (the first `warmup_calls`
  // were the warm-up).
  void witness_claims(protocol::TimeReply& reply) const;
  void copy_every_set_out();
  static std::string prefix(size_t set) { return "timed" + std::to_string(set); }

  ProcessExecutor& process_;
  const std::string op_;
  const std::string what_;
  const nlohmann::json& scalars_;
  const std::vector<std::vector<Binding>>& sets_;
  const double timeout_s_;
  std::vector<nlohmann::json> requests_;
  std::vector<bool> revealed_;
  std::vector<std::set<uint64_t>> set_buffers_;
  bool fresh_inputs_ = false;
  bool reads_at_reply_ = true;
  std::string message_;
  std::vector<double> request_ns_;                 // the harness's clock around each request, in order
  std::vector<std::optional<double>> claimed_ns_;  // each request's claimed time, where it claimed
};

}  // namespace harness
