// The timing witness: what the harness's own clock says about timings that
// another process reported.
//
// A compiled submission runs inside the worker, so the worker's samples are
// its word: it can write a reply of its own on the worker's socket, or patch
// the worker's clock. The harness measures the monotonic clock of its own
// process around the whole timing request. That time covers every call the
// worker claims to have made (warm-up and timed) plus what happens between
// calls. The between-calls part is stated, not guessed: re-poisoning the
// outputs (timed by the harness on its own copy of the same bytes), a fixed
// cost per call for the loop's own clock reads and bookkeeping, the device
// copies before and after the loop (the worker's figure, capped by a copy
// rate no bus falls below) and a fixed cost per request for the messages.
//
// The harness sets how many calls each request makes (WorkerExecutor::time
// sends batches of a known size and refuses a reply with another count), so
// the number of calls is not the worker's word. A claim is contradicted
// when the calls, summed, take longer than the whole request did, or fall
// short of
// what the witness leaves for them by more than a factor kWitnessMargin:
// the time went somewhere the claim does not show. The scores then never
// use a per-call time below the witness's floor (what is left for the calls,
// over their number, divided by the margin), so a few long claims beside
// many tiny ones (a fast median over an honest sum) gain nothing either.
//
// What it cannot see: a forger claiming at most kWitnessMargin times less
// than it took (plus the stated allowances), or spending real time to look
// slower than it is (an answer replayed from memory, then a spin): that
// time is real; the fresh inputs of every round of timed calls
// (FreshInputs) expose it instead.
#pragma once

#include <cstddef>
#include <string>

namespace harness {

inline constexpr double kWitnessMargin = 1.5;

// What the worker claimed about one timing request.
struct TimingClaim {
  size_t calls = 0;       // warm-up calls plus timed calls (the count the harness asked for)
  double calls_ns = 0;    // their claimed times, summed (host clock around call + synchronise)
  double setup_ns = 0;    // claimed device copies before and after the loop
  double median_ns = 0;   // the median the score would use
};

// The harness's own figures.
struct TimingWitness {
  double request_ns = 0;        // harness clock around the request
  double per_call_ns = 0;       // stated cost between two calls (re-poisoning, bookkeeping)
  double per_request_ns = 0;    // stated cost of the requests, all of them (messages, loop start)
  double max_setup_ns = 0;      // the most the device copies may take (bytes at the slowest copy rate)
};

struct WitnessJudgement {
  double overhead_ns = 0;        // stated overhead subtracted from the witness
  double left_for_calls_ns = 0;  // request_ns - overhead_ns
  double floor_ns = 0;           // the shortest mean time per call the witness allows
  double median_used_ns = 0;     // max(claimed median, floor)
  bool contradicted = false;
  std::string message;           // names both figures when contradicted, or when the floor raised the median
};

WitnessJudgement judge_timing(const TimingClaim& claim, const TimingWitness& witness);

// The stated cost of one request (its messages, the timed loop's start) for
// a worker on a device of this kind ("cpu", "cuda"). Measured for the CPU:
// 0.28 to 0.66 ms per request beyond the claimed calls, the gaps between
// calls included, over every perf case of every compiled CPU submission on a
// 2-core virtual machine; 1 ms is allowed. With fresh inputs a request is
// one round of calls (a few sets), so this allowance weighs: at the 5 ms
// once allowed everywhere, a clock running twice slow passed on softmax's
// 64-row case (two 5 ms calls per request). Not measured on a GPU yet: 5 ms.
double witness_per_request_ns(const std::string& device_kind);

}  // namespace harness
