// Repeated, timed calls of one op over several input sets. run_timing_loop:
// warm-up, then timed calls rotating through the sets until the policy says
// stop (the process executor, whose every call the harness times itself).
// run_timing_batch: exactly the calls the harness asked for (the worker of
// compiled submissions; WorkerExecutor applies the policy between batches).
// Each caller supplies how one call is prepared, made and timed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "harness/ipc/protocol.h"

namespace harness {

struct TimedCall {
  int32_t status = 0;   // the submission's status; anything but 0 stops the loop
  double device_ns = 0; // the call alone (CUDA events, or the host clock)
  double wall_ns = 0;   // host clock around the call and a device synchronisation
};

// `call(set)` makes one call on input set `set`, which must leave that set's
// outputs freshly written (re-poisoned before), and times it.
//
// With `new_round`, the calls go in whole rounds (each set once, in order):
// new_round() runs before every round but the first, and the loop ends only
// after a whole round (see FreshInputs in harness/runner/executor.h).
protocol::TimeReply run_timing_loop(size_t set_count, const std::function<TimedCall(size_t set)>& call,
                                    const protocol::TimingPolicy& policy,
                                    const std::function<void()>& new_round = {});

// Exactly the batch's warm-up and timed calls (the harness decides when to
// stop: see WorkerExecutor::time).
protocol::TimeReply run_timing_batch(size_t set_count, const std::function<TimedCall(size_t set)>& call,
                                     const protocol::TimingBatch& batch);

// The fewest timed calls behind any median: `harness gate` compares timings
// with a rank test that needs at least this many on each side.
inline constexpr size_t kMinimumSamples = 5;

}  // namespace harness
