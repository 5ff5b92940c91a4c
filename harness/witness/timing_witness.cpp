#include "harness/witness/timing_witness.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "harness/core/stats.h"
#include "harness/witness/witness_parts.h"

namespace harness {

namespace {

// A rate no bus between host and device falls below, in bytes per ns (GB/s).
constexpr double kSlowestCopyBytesPerNs = 1.0;

// What the witness leaves for one request's calls: its clock less its stated
// overhead (the claimed copies counted only up to what a slow bus needs).
double overhead_of(const protocol::WitnessedRequest& r, const WitnessAllowances& a) {
  const double setup = std::clamp(r.claimed_setup_ns, 0.0, a.max_setup_per_request_ns);
  return a.per_request_ns + setup + a.per_call_ns * static_cast<double>(r.warmup_calls + r.timed_calls);
}

// A staged round's upload and download beyond what its copies may take:
// time the calls may have had, counted as the request's.
double staging_counted(const protocol::WitnessedRequest& r, const WitnessAllowances& a) {
  return std::max(0.0, r.staging_ns - a.max_staging_per_request_ns);
}

// What one request's clock leaves for its calls: its time, with its
// round's staging beyond the allowance, less its stated overhead.
double left_of(const protocol::WitnessedRequest& r, const WitnessAllowances& a) {
  return std::max(0.0, r.ns + staging_counted(r, a) - overhead_of(r, a));
}

// The median over timed calls of a figure of their request: each timed
// call counts once, with its request's figure.
template <typename Figure>
double median_over_timed_calls(const std::vector<protocol::WitnessedRequest>& requests, Figure figure) {
  std::vector<double> per_timed_call;
  for (const auto& r : requests) per_timed_call.insert(per_timed_call.end(), r.timed_calls, figure(r));
  return per_timed_call.empty() ? 0.0 : median(std::move(per_timed_call));
}

// How many times its claim the calls of one request took at least: what
// its clock left for them over what the worker claims they took.
double excess_of(const protocol::WitnessedRequest& r, const WitnessAllowances& a) {
  const double left = left_of(r, a);
  if (left <= 0) return 0.0;
  return r.claimed_ns > 0 ? left / r.claimed_ns : std::numeric_limits<double>::infinity();
}

}  // namespace

WitnessJudgement judge_timing(const std::vector<protocol::WitnessedRequest>& requests, double median_ns,
                              const WitnessAllowances& allowances) {
  WitnessJudgement j;
  for (const auto& r : requests) {
    j.calls += r.warmup_calls + r.timed_calls;
    j.staging_ns += r.staging_ns;
    j.staging_counted_ns += staging_counted(r, allowances);
    j.request_ns += r.ns + staging_counted(r, allowances);
    j.claimed_ns += r.claimed_ns;
    j.overhead_ns += overhead_of(r, allowances);
    if (r.timed_calls > 0) ++j.timed_requests;
  }
  j.left_for_calls_ns = std::max(0.0, j.request_ns - j.overhead_ns);
  j.floor_ns = median_over_timed_calls(requests, [&](const protocol::WitnessedRequest& r) {
    return left_of(r, allowances) / (static_cast<double>(r.warmup_calls + r.timed_calls) * kWitnessMargin);
  });
  j.median_excess =
      median_over_timed_calls(requests, [&](const protocol::WitnessedRequest& r) { return excess_of(r, allowances); });
  j.median_used_ns = std::max(median_ns, j.floor_ns);
  if (j.claimed_ns > j.request_ns) {
    j.contradicted = true;
    j.message = fmt::format(
        "the worker claims {} calls took {:.3f} ms in all (median {:.1f} us), but the harness's clock saw the "
        "requests take {:.3f} ms: more time than passed",
        j.calls, j.claimed_ns / 1e6, median_ns / 1e3, j.request_ns / 1e6);
  } else if (j.median_excess > kWitnessMargin) {
    j.contradicted = true;
    j.message = fmt::format(
        "the worker claims {} calls took {:.3f} ms in all (median {:.1f} us), but the harness's clock saw {} requests "
        "take {:.3f} ms, of which at most {:.3f} ms is overhead ({:.3f} ms per request, {:.1f} us per call, copies "
        "as claimed up to {:.3f} ms per request): the calls took at least {:.3f} ms; in the median of its {} "
        "requests of timed calls they took at least {:.1f}x the claim, over {:.1f}x",
        j.calls, j.claimed_ns / 1e6, median_ns / 1e3, requests.size(), j.request_ns / 1e6, j.overhead_ns / 1e6,
        allowances.per_request_ns / 1e6, allowances.per_call_ns / 1e3, allowances.max_setup_per_request_ns / 1e6,
        j.left_for_calls_ns / 1e6, j.timed_requests, j.median_excess, kWitnessMargin);
    if (j.staging_counted_ns > 0) {
      j.message += fmt::format(
          "; the requests' time includes {:.3f} ms of the rounds' uploads and downloads beyond what their copies "
          "may take ({:.3f} ms a round; they took {:.3f} ms in all)",
          j.staging_counted_ns / 1e6, allowances.max_staging_per_request_ns / 1e6, j.staging_ns / 1e6);
    }
  } else if (j.floor_ns > median_ns) {
    j.message = fmt::format(
        "median raised from {:.1f} us to the witness's floor of {:.1f} us per call (over its {} requests of timed "
        "calls, the median time per call the harness's clock left, over {:.1f})",
        median_ns / 1e3, j.floor_ns / 1e3, j.timed_requests, kWitnessMargin);
  }
  return j;
}

double witness_per_request_ns(const std::string& device_kind, bool staged) {
  if (device_kind == "cpu") return 1e6;
  return staged ? 1e6 : 5e6;
}

double witness_max_copy_ns(const std::string& device_kind, bool staged, double all_sets_bytes) {
  if (device_kind == "cpu" || staged) return 0.0;
  return 2.0 * all_sets_bytes / kSlowestCopyBytesPerNs + witness_per_request_ns(device_kind, staged);
}

double witness_max_staging_ns(const std::string& device_kind, double all_sets_bytes) {
  if (witness_part_disabled("gpu-staging-time")) return std::numeric_limits<double>::infinity();
  const double copies = device_kind == "cpu" ? 0.0 : 2.0 * all_sets_bytes / kSlowestCopyBytesPerNs;
  return copies + 2.0 * witness_per_request_ns(device_kind, true);
}

WitnessAllowances request_allowances(const std::string& device_kind, bool staged, bool harness_copies,
                                     double all_sets_bytes) {
  const bool calls_alone = staged || harness_copies;
  WitnessAllowances allowances;
  allowances.per_request_ns = witness_per_request_ns(device_kind, calls_alone);
  allowances.max_setup_per_request_ns = witness_max_copy_ns(device_kind, calls_alone, all_sets_bytes);
  if (staged) allowances.max_staging_per_request_ns = witness_max_staging_ns(device_kind, all_sets_bytes);
  return allowances;
}

}  // namespace harness
