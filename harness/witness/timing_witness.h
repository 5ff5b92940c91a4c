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
// when the calls, summed over every request, take longer than the requests
// did, or when in most requests of timed calls (the median over timed
// calls of their request's figure) the witness leaves the calls more than
// kWitnessMargin times what the worker claims for them: the time went
// somewhere the claim does not show. Most, not the sum: one request
// stalled by the machine (a throttled container, a page reclaim) adds its
// stall to a sum, and on a GPU, where our fast kernels claim 0.5 ms a
// round, a single stall of 57 to 80 ms would have contradicted cuda-fast's
// kv_cache decode by the sum (its H100 figures, reports/gpu-h100). A forger must under-claim most timed calls to move the
// claimed median the scores use, and in those requests the witness sees it;
// under-claiming fewer moves that median at most to the lowest of its
// honest calls.
// The scores then never use a per-call time below the witness's floor, so a
// few long claims beside many tiny ones (a fast median over an honest sum)
// gain nothing either.
//
// The floor is a median, like the score it bounds: each request of timed
// calls leaves some time per call (its clock, less its stated overhead, over
// its calls); the floor is the median of that over the timed calls, divided
// by the margin. Warm-up requests and a few slow requests do not move it: a
// mean over every call once let two 33 ms warm-up calls on a busy machine
// put the floor at 0.99 of an honest 8.2 ms median. A forger gains nothing
// from the median: every request's time is the harness's own clock, so a
// request is short only when its calls really were.
//
// A staged request (a GPU worker's) holds the calls alone; the round's
// upload and download are requests of their own, outside the timed one.
// Their time is the worker's to stretch: work started while the inputs are
// uploaded, or finished while the outputs are downloaded, is not in the
// timed request. So each round's staging is allowed what its copies may
// take (witness_max_staging_ns), and what it took beyond that counts as
// the calls' time, like the request's own.
//
// What it cannot see: a forger claiming at most kWitnessMargin times less
// than it took (plus the stated allowances), or spending real time to look
// slower than it is (an answer replayed from memory, then a spin): that
// time is real; the fresh inputs of every round of timed calls
// (FreshInputs) expose it instead.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/ipc/protocol.h"

namespace harness {

inline constexpr double kWitnessMargin = 1.5;

// What the witness allows for beyond the calls themselves.
struct WitnessAllowances {
  double per_call_ns = 0;               // between two calls (re-poisoning, bookkeeping)
  double per_request_ns = 0;            // one request's messages and the timed loop's start
  double max_setup_per_request_ns = 0;  // the most one request's device copies may take (bytes at the slowest copy rate)
  double max_staging_per_request_ns = 0;  // the most a staged round's upload and download may take together
};

struct WitnessJudgement {
  size_t calls = 0;              // every call asked for, warm-up included
  double request_ns = 0;         // the harness's clock around every request, summed, with staging_counted_ns
  double claimed_ns = 0;         // the worker's times of every call, summed
  double staging_ns = 0;         // the harness's clock around the staged rounds' uploads and downloads, summed
  double staging_counted_ns = 0; // the part of it beyond what the copies may take: counted in request_ns
  double overhead_ns = 0;        // stated overhead subtracted from the witness, all requests
  double left_for_calls_ns = 0;  // request_ns - overhead_ns
  size_t timed_requests = 0;     // requests with timed calls: the floor's median runs over them
  double floor_ns = 0;           // the shortest time per call the witness allows
  // The median over timed calls of how many times its claim their request's
  // calls took at least (its clock less its overhead, over its claim);
  // beyond kWitnessMargin the claim is contradicted. Infinite where the
  // median request claims nothing of time its clock saw.
  double median_excess = 0;
  double median_used_ns = 0;     // max(claimed median, floor)
  bool contradicted = false;
  std::string message;           // names both figures when contradicted, or when the floor raised the median
};

// `median_ns`: the claimed median the score would use.
WitnessJudgement judge_timing(const std::vector<protocol::WitnessedRequest>& requests, double median_ns,
                              const WitnessAllowances& allowances);

// The stated cost of one request (its messages, the timed loop's start)
// for a worker on a device of this kind ("cpu", "cuda"), whose timed
// requests hold the calls alone (`staged`: a GPU worker's copies in requests
// of their own) or also the copies of their sets. Measured for the CPU:
// 0.28 to 0.66 ms per request beyond the claimed calls, the gaps between
// calls included, over every perf case of every compiled CPU submission on a
// 2-core virtual machine; 1 ms is allowed. With fresh inputs a request is
// one round of calls (a few sets), so this allowance weighs: at the 5 ms
// once allowed everywhere, a clock running twice slow passed on softmax's
// 64-row case (two 5 ms calls per request). A staged GPU request: 1 ms (see
// docs/ARCHITECTURE.md, Witnesses, for what was measured). An unstaged one
// (HARNESS_WITNESS_DISABLE=gpu-staging): 5 ms, since there a request is
// mostly the upload of its sets (measured on an H200: 1.2 ms at 0.5 MB to
// 199 ms at 537 MB), so no allowance sees the calls.
double witness_per_request_ns(const std::string& device_kind, bool staged);

// The most one request's device copies may take, for a worker on a device
// of this kind whose sets hold `all_sets_bytes` together: none on the CPU,
// whose backend copies nothing (a worker that claims copies there moves
// time out of its calls: cpu-exploit-claimed-copies), nor in a staged
// request, which holds none; otherwise every set's bytes there and back at
// 1 GB/s, a rate no bus falls below, plus one request's allowance.
double witness_max_copy_ns(const std::string& device_kind, bool staged, double all_sets_bytes);

// The most one staged round's upload and download may take together: two
// requests' allowance, and on a device whose backend copies (not the CPU's)
// every set's bytes there and back at 1 GB/s. On an H100 our submissions'
// rounds took 11-25% of it (reports/gpu-h100: 0.9-1.8 ms for kv_cache's
// perf sets of 1-4 MB, at 2.1-4.9 GB/s; 117-179 ms for layernorm's of
// 537-806 MB, at 8.8-9.2 GB/s). Work hidden within the rest gets through
// (docs/SECURITY.md, "Work hidden in the staging"). Unlimited when
// HARNESS_WITNESS_DISABLE names gpu-staging-time, for the test that shows
// work hidden in the download getting through.
double witness_max_staging_ns(const std::string& device_kind, double all_sets_bytes);

}  // namespace harness
