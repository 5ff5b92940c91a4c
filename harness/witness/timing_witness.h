// The timing witness: the harness's own clock around each timing request,
// judged against the call times the worker claims (the submission's word: it
// can write its own replies or patch the worker's clock). The harness chooses
// how many calls a request makes, so only the times are claims. See
// docs/ARCHITECTURE.md, Witnesses.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/ipc/protocol.h"

namespace harness {

// A claim is contradicted when the calls, summed, take longer than the
// requests did, or when in most timed requests (the median over timed calls)
// the clock leaves the calls more than kWitnessMargin times their claim: the
// median, so that one request stalled by the machine does not contradict an
// honest claim. Not seen: a claim less than kWitnessMargin times too fast, and
// real time spent to look slower (FreshInputs exposes that).
inline constexpr double kWitnessMargin = 1.5;

// Allowed per call for the timed loop's own work between two calls (its
// clock reads, its running median).
inline constexpr double kWitnessPerCallNs = 10e3;

// What the witness allows for beyond the calls themselves.
struct WitnessAllowances {
  double per_call_ns = 0;                 // between two calls (re-poisoning, bookkeeping)
  double per_request_ns = 0;              // one request's messages and the timed loop's start
  double max_setup_per_request_ns = 0;    // the most one request's device copies may take
  double max_staging_per_request_ns = 0;  // the most a staged round's upload and download may take together
};

struct WitnessJudgement {
  size_t calls = 0;               // every call asked for, warm-up included
  double request_ns = 0;          // the harness's clock around every request, summed, with staging_counted_ns
  double claimed_ns = 0;          // the worker's times of every call, summed
  double staging_ns = 0;          // the harness's clock around the staged rounds' uploads and downloads, summed
  double staging_counted_ns = 0;  // the part of it beyond what the copies may take: counted in request_ns
  double overhead_ns = 0;         // stated overhead subtracted from the witness, all requests
  double left_for_calls_ns = 0;   // request_ns - overhead_ns
  size_t timed_requests = 0;      // requests with timed calls: the floor's median runs over them
  double floor_ns = 0;            // the shortest time per call the witness allows
  // The median over timed calls of how many times its claim their request's
  // calls took at least (its clock less its overhead, over its claim);
  // beyond kWitnessMargin the claim is contradicted. Infinite where the
  // median request claims nothing of time its clock saw.
  double median_excess = 0;
  double median_used_ns = 0;  // max(claimed median, floor)
  bool contradicted = false;
  std::string message;  // names both figures when contradicted, or when the floor raised the median
};

// `median_ns`: the claimed median the score would use. The floor is the
// median over timed calls of the time per call their request's clock left,
// over kWitnessMargin, so warm-up and a few slow requests do not move it. A
// staged round's upload and download beyond witness_max_staging_ns count as
// the calls' time.
WitnessJudgement judge_timing(const std::vector<protocol::WitnessedRequest>& requests, double median_ns,
                              const WitnessAllowances& allowances);

// The stated cost of one request (its messages, the timed loop's start) for a
// worker on a device of this kind ("cpu", "cuda"): 1 ms on the CPU and for a
// staged GPU request, which holds the calls alone; 5 ms for an unstaged one
// (HARNESS_WITNESS_DISABLE=gpu-staging), mostly its sets' upload. With fresh
// inputs a request is one round of a few calls, so this allowance weighs.
double witness_per_request_ns(const std::string& device_kind, bool staged);

// The most one request's device copies may take, for a worker whose sets
// hold `all_sets_bytes` together: none on the CPU, whose backend copies
// nothing (claimed copies there would move time out of the calls), nor in a
// staged request; otherwise every set's bytes there and back at 1 GB/s, a
// rate no bus falls below, plus one request's allowance.
double witness_max_copy_ns(const std::string& device_kind, bool staged, double all_sets_bytes);

// The most one staged round's upload and download may take together: two
// requests' allowance plus, where the backend copies (not the CPU's), every
// set's bytes there and back at 1 GB/s. Work hidden within that gets through
// (docs/SECURITY.md, "Work hidden in the staging"). Unlimited when
// HARNESS_WITNESS_DISABLE names gpu-staging-time.
double witness_max_staging_ns(const std::string& device_kind, double all_sets_bytes);

// A timing's request allowances (per_call_ns left to the caller). A request
// that held the calls alone, its sets staged by requests of their own
// (`staged`) or copied by the harness into device memory it owns
// (`harness_copies`), is allowed a staged request's cost and no copies;
// staging requests are judged only where the worker staged.
WitnessAllowances request_allowances(const std::string& device_kind, bool staged, bool harness_copies,
                                     double all_sets_bytes);

}  // namespace harness
