// Repeated, timed calls of one op over several input sets: run_timing_loop
// until the policy says stop (the process executor, which times every call
// itself), run_timing_batch exactly the calls the harness asked for (the
// worker; WorkerExecutor applies the policy between batches). Each caller
// supplies how one call is prepared, made and timed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "harness/ipc/protocol.h"

namespace harness {

struct TimedCall {
  int32_t status = 0;    // the submission's status; anything but 0 stops the loop
  double device_ns = 0;  // the call alone (CUDA events, or the host clock)
  double wall_ns = 0;    // host clock around the call and a device synchronisation
};

// `call(set)` makes one call on input set `set`, which must leave that set's
// outputs freshly written (re-poisoned before), and times it. With
// `new_round`, the calls go in whole rounds (each set once, in order):
// new_round() runs before every round but the first, and the loop ends only
// after a whole round (see FreshInputs in harness/challenge_api/executor.h).
protocol::TimeReply run_timing_loop(size_t set_count, const std::function<TimedCall(size_t set)>& call,
                                    const protocol::TimingPolicy& policy, const std::function<void()>& new_round = {});

// Exactly the batch's warm-up and timed calls (the harness decides when to
// stop: see WorkerExecutor::time).
protocol::TimeReply run_timing_batch(size_t set_count, const std::function<TimedCall(size_t set)>& call,
                                     const protocol::TimingBatch& batch);

// The fewest timed calls behind any median: `harness gate` compares timings
// with a rank test that needs at least this many on each side.
inline constexpr size_t kMinimumSamples = 5;

// New samples between two checks of the running median (TimingStopRule).
inline constexpr size_t kCallsPerCheck = 6;

// When timed calls may stop, by the policy: at max_samples; at max_ms once
// kMinimumSamples are in; or once enough samples (min_samples, every set,
// kMinimumSamples) and min_ms of measured time are in and the median has held
// within settle_tolerance at two checks in a row. One rule for the loop above
// and for WorkerExecutor's batches.
class TimingStopRule {
 public:
  TimingStopRule(const protocol::TimingPolicy& policy, size_t set_count) : policy_(policy), sets_(set_count) {}
  // The calls a median is checked after: whole rounds of every set, at
  // least kCallsPerCheck (with fresh inputs every round costs the harness a
  // pass over every set's tensors; a check mid-round never falls due).
  size_t check_every() const {
    const size_t sets = std::max<size_t>(sets_, 1);
    return (std::max(sets, kCallsPerCheck) + sets - 1) / sets * sets;
  }
  // After new samples: `measured_ns` their sum, `elapsed_ms` since timing
  // began; `check_median` where a median check falls due.
  bool done(const std::vector<double>& device_ns, double measured_ns, double elapsed_ms, bool check_median);

 private:
  const protocol::TimingPolicy& policy_;
  size_t sets_;
  double last_median_ = -1;
  int settled_checks_ = 0;
};

}  // namespace harness
