#include "harness/witness/timing_witness.h"

#include <fmt/format.h>

#include <algorithm>

namespace harness {

WitnessJudgement judge_timing(const TimingClaim& claim, const TimingWitness& witness) {
  WitnessJudgement j;
  const double setup = std::clamp(claim.setup_ns, 0.0, witness.max_setup_ns);
  j.overhead_ns = witness.per_request_ns + setup + witness.per_call_ns * static_cast<double>(claim.calls);
  j.left_for_calls_ns = std::max(0.0, witness.request_ns - j.overhead_ns);
  j.floor_ns = claim.calls > 0 ? j.left_for_calls_ns / (static_cast<double>(claim.calls) * kWitnessMargin) : 0.0;
  j.median_used_ns = std::max(claim.median_ns, j.floor_ns);
  if (claim.calls_ns > witness.request_ns) {
    j.contradicted = true;
    j.message = fmt::format(
        "the worker claims {} calls took {:.3f} ms in all (median {:.1f} us), but the harness's clock saw the whole "
        "request take {:.3f} ms: more time than passed",
        claim.calls, claim.calls_ns / 1e6, claim.median_ns / 1e3, witness.request_ns / 1e6);
  } else if (claim.calls_ns * kWitnessMargin < j.left_for_calls_ns) {
    j.contradicted = true;
    j.message = fmt::format(
        "the worker claims {} calls took {:.3f} ms in all (median {:.1f} us), but the harness's clock saw the request "
        "take {:.3f} ms, of which at most {:.3f} ms is overhead ({:.3f} ms for the requests, {:.1f} us per call, {:.3f} ms "
        "of copies): the calls took at least {:.3f} ms, over {:.1f}x the claim",
        claim.calls, claim.calls_ns / 1e6, claim.median_ns / 1e3, witness.request_ns / 1e6, j.overhead_ns / 1e6,
        witness.per_request_ns / 1e6, witness.per_call_ns / 1e3, setup / 1e6, j.left_for_calls_ns / 1e6,
        kWitnessMargin);
  } else if (j.floor_ns > claim.median_ns) {
    j.message = fmt::format(
        "median raised from {:.1f} us to the witness's floor of {:.1f} us per call ({:.3f} ms left for {} calls by the "
        "harness's clock, over {:.1f})",
        claim.median_ns / 1e3, j.floor_ns / 1e3, j.left_for_calls_ns / 1e6, claim.calls, kWitnessMargin);
  }
  return j;
}

double witness_per_request_ns(const std::string& device_kind) { return device_kind == "cpu" ? 1e6 : 5e6; }

}  // namespace harness
