// The timing witness: the harness's clock around timed requests against
// what a worker claims for its calls. Each defence against its exploit, and
// the same figures getting through without it.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "harness/core/stats.h"
#include "harness/results/results.h"
#include "harness/witness/timing_witness.h"

namespace harness {
namespace {

using protocol::WitnessedRequest;

WitnessAllowances allowances_of(double per_request_ns, double per_call_ns = 20e3, double max_setup_ns = 1e6) {
  return WitnessAllowances{per_call_ns, per_request_ns, max_setup_ns};
}

// One request of `calls` timed calls that the harness's clock saw take
// `request_ms`, claimed to take `claimed_ns` in all.
std::vector<WitnessedRequest> one_request(double request_ms, size_t calls, double claimed_ns, double setup_ns = 0) {
  return {WitnessedRequest{request_ms * 1e6, 0, calls, claimed_ns, setup_ns}};
}

TEST(TimingWitness, HonestClaimWithItsOverheadStands) {
  // 100 calls of 2 ms, 40 us between calls, 3 ms for the messages.
  const WitnessJudgement j = judge_timing(one_request(200 + 4 + 3, 100, 100 * 2e6), 2e6, allowances_of(5e6));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.median_used_ns, 2e6);
  EXPECT_TRUE(j.message.empty()) << j.message;
}

// cpu-forged-reply: 50 calls claimed at 26 us each while the request took
// 1.2 s of the harness's clock.
TEST(TimingWitness, ForgedReplyIsContradictedAndTheMessageNamesBothFigures) {
  const WitnessJudgement j = judge_timing(one_request(1200, 50, 50 * 26e3), 26e3, allowances_of(5e6));
  EXPECT_TRUE(j.contradicted);
  EXPECT_NE(j.message.find("1.300 ms"), std::string::npos) << j.message;     // the claim
  EXPECT_NE(j.message.find("1200.000 ms"), std::string::npos) << j.message;  // the witness
  // Without the witness the claim is all there is: its median is scored.
  TimingResult unwitnessed{};  // value-initialised: GCC 12 (sanitizer build) misreads the empty optional otherwise
  unwitnessed.summary.median = 26e3;
  EXPECT_EQ(unwitnessed.scored_median_ns(), 26e3);
  TimingResult witnessed = unwitnessed;
  witnessed.witness =
      TimingResult::Witness{j.request_ns, j.overhead_ns, j.claimed_ns, j.calls, j.floor_ns, 1, false, 0};
  EXPECT_GT(witnessed.scored_median_ns(), 100 * 26e3);
}

// A fast median over an honest sum (a few long claims beside many tiny
// ones) is not contradicted, but the score uses the witness's floor.
TEST(TimingWitness, FloorRaisesAMedianTheSumDoesNotSupport) {
  const WitnessJudgement j = judge_timing(one_request(400 + 5 + 2, 100, 90 * 1e3 + 10 * 40e6), 1e3, allowances_of(5e6));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_GT(j.median_used_ns, 2e6);
  EXPECT_NE(j.message.find("floor"), std::string::npos);
}

// The same claims spread over ten requests: the floor is the median over
// requests, and every request's time is the harness's, so it still bites.
TEST(TimingWitness, FloorOverManyRequestsStillRaisesAMedianTheSumDoesNotSupport) {
  std::vector<WitnessedRequest> requests;
  for (int r = 0; r < 10; ++r) requests.push_back(WitnessedRequest{(40 + 0.5 + 0.2) * 1e6, 0, 10, 9 * 1e3 + 40e6, 0});
  const WitnessJudgement j = judge_timing(requests, 1e3, allowances_of(0.5e6));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.timed_requests, 10u);
  EXPECT_GT(j.median_used_ns, 2e6);
}

// Figures of layernorm_backward's forward r32768.d1024 with cpu-fast on a
// busy 2-core VM: a warm-up round of two calls at 33 ms each, then rounds
// of two calls at the honest 8.2 ms, one of them caught by a 30 ms spike.
TEST(TimingWitness, SlowWarmUpAndASpikeDoNotRaiseAnHonestMedian) {
  std::vector<WitnessedRequest> requests{WitnessedRequest{66.3e6, 2, 0, 66e6, 0}};
  for (int r = 0; r < 5; ++r) requests.push_back(WitnessedRequest{16.7e6, 0, 2, 16.4e6, 0});
  requests[3] = WitnessedRequest{30e6, 0, 2, 29.7e6, 0};
  const WitnessAllowances allowances = allowances_of(witness_per_request_ns("cpu", false), 10e3, 0);
  const WitnessJudgement j = judge_timing(requests, 8.2e6, allowances);
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.timed_requests, 5u);
  EXPECT_EQ(j.median_used_ns, 8.2e6);
  EXPECT_TRUE(j.message.empty()) << j.message;
  // A floor from the mean over every call, warm-up included, as the witness
  // once set it, raises the honest median.
  const double mean_floor = j.left_for_calls_ns / (static_cast<double>(j.calls) * kWitnessMargin);
  EXPECT_GT(mean_floor, 8.2e6);
}

// A clock running twice slow in the worker (cpu-exploit-clock-patch, with
// a divisor of 2 instead of 10) on rounds of short calls: figures of
// softmax_topk's perf.normal.r64.v262144.k32 with cpu-fast on a 2-core VM,
// 50 requests of one round (2 calls of 5.1 ms), 0.29 ms per request beyond
// the calls. The claim is half the truth.
std::vector<WitnessedRequest> short_rounds(double claimed_per_call_ns) {
  return std::vector<WitnessedRequest>(50, WitnessedRequest{2 * 5.1e6 + 0.29e6, 0, 2, 2 * claimed_per_call_ns, 0});
}

// Without staging (HARNESS_WITNESS_DISABLE=gpu-staging) a GPU request holds
// its sets' copies, and the allowance for them hides the slow clock.
TEST(TimingWitness, AClockTwiceSlowOnShortRoundsPassedWithTheAllowanceOfAnUnstagedGpuRequest) {
  const WitnessJudgement j =
      judge_timing(short_rounds(2.55e6), 2.55e6, allowances_of(witness_per_request_ns("cuda", false), 10e3, 0));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.median_used_ns, 2.55e6);  // scored twice as fast as it ran
}

TEST(TimingWitness, AClockTwiceSlowOnShortRoundsIsContradictedOnAGpuWhoseRequestsAreStaged) {
  const WitnessAllowances gpu = allowances_of(witness_per_request_ns("cuda", true), 10e3, 0);
  EXPECT_EQ(witness_max_copy_ns("cuda", true, 2 * 134234112.0), 0.0);
  EXPECT_TRUE(judge_timing(short_rounds(2.55e6), 2.55e6, gpu).contradicted);
  const WitnessJudgement j = judge_timing(short_rounds(5.1e6), 5.1e6, gpu);
  EXPECT_FALSE(j.contradicted) << j.message;
}

TEST(TimingWitness, AClockTwiceSlowOnShortRoundsIsContradictedOnTheCpu) {
  const WitnessAllowances cpu = allowances_of(witness_per_request_ns("cpu", false), 10e3, 0);
  EXPECT_TRUE(judge_timing(short_rounds(2.55e6), 2.55e6, cpu).contradicted);
  // The honest claim of the same calls stands.
  const WitnessJudgement j = judge_timing(short_rounds(5.1e6), 5.1e6, cpu);
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.median_used_ns, 5.1e6);
}

TEST(TimingWitness, ClaimLongerThanTheRequestIsContradicted) {
  const WitnessJudgement j = judge_timing(one_request(420, 50, 50 * 26.8e6), 26.8e6, allowances_of(5e6));
  EXPECT_TRUE(j.contradicted);
  EXPECT_NE(j.message.find("more time than passed"), std::string::npos) << j.message;
}

TEST(TimingWitness, ClaimedCopiesAreCappedByTheSlowestCopyRate) {
  // Claiming 1 s of copies cannot excuse 1 s missing from the calls.
  EXPECT_TRUE(judge_timing(one_request(1000, 50, 50 * 1e3, 1e9), 1e3, allowances_of(5e6)).contradicted);
}

// cpu-exploit-claimed-copies (softmax_topk perf.normal.r256.v131072.k8, two
// sets of 134 MB, seed 1 on a 2-core VM): its replies moved 90% of every
// call into claimed copies, 1.7 s of them over 7 requests that the
// harness's clock saw take 1.93 s.
TEST(TimingWitness, CopiesClaimedByACpuWorkerAreAllowedNothing) {
  const double all_sets_bytes = 2 * 134234112.0;
  std::vector<WitnessedRequest> requests(7, WitnessedRequest{1928.947e6 / 7, 0, 2, 192.643e6 / 7, 1700e6 / 7});
  requests[0].timed_calls = 0;
  requests[0].warmup_calls = 2;
  WitnessAllowances allowances{10e3, witness_per_request_ns("cpu", false), 0};
  allowances.max_setup_per_request_ns = witness_max_copy_ns("cpu", false, all_sets_bytes);
  EXPECT_EQ(allowances.max_setup_per_request_ns, 0.0);
  const WitnessJudgement j = judge_timing(requests, 13.5e6, allowances);
  EXPECT_TRUE(j.contradicted) << j.message;
  // Allowed copies at 1 GB/s, as a GPU worker is, the move stayed hidden:
  // the calls scored at ten times their speed.
  allowances.max_setup_per_request_ns = witness_max_copy_ns("cuda", false, all_sets_bytes);
  const WitnessJudgement hidden = judge_timing(requests, 13.5e6, allowances);
  EXPECT_FALSE(hidden.contradicted) << hidden.message;
  EXPECT_EQ(hidden.median_used_ns, 13.5e6);
}

// Staged rounds of cuda-naive kv_cache's perf.decode.l1.h32x8.d128.b64.t2048
// on an H100 (reports/gpu-h100/results.json): 30 rounds of two calls with a
// median of 2.77 ms, 6.06 ms per timed request, 1.71 ms per round of upload
// and download for two sets of 2.1 MB. The same calls done in the download
// (a kernel ten times slower, 27.7 ms a round, while each timed request
// claims two calls of 0.1 ms that did nothing) are counted as the calls'.
TEST(TimingWitness, StagingBeyondWhatTheCopiesMayTakeCountsAsTheCalls) {
  const double all_sets_bytes = 2 * 2.1e6;
  WitnessAllowances allowances{10e3, witness_per_request_ns("cuda", true), 0};
  allowances.max_staging_per_request_ns = witness_max_staging_ns("cuda", all_sets_bytes);
  EXPECT_NEAR(allowances.max_staging_per_request_ns, 10.4e6, 1e3);
  const std::vector<WitnessedRequest> honest(30, WitnessedRequest{6.06e6, 0, 2, 2 * 2.77e6, 0, 1.71e6});
  const WitnessJudgement stands = judge_timing(honest, 2.77e6, allowances);
  EXPECT_FALSE(stands.contradicted) << stands.message;
  EXPECT_EQ(stands.staging_counted_ns, 0.0);
  EXPECT_EQ(stands.median_used_ns, 2.77e6);

  const std::vector<WitnessedRequest> hidden(30, WitnessedRequest{0.5e6, 0, 2, 2 * 0.1e6, 0, 1.71e6 + 27.7e6});
  const WitnessJudgement caught = judge_timing(hidden, 0.1e6, allowances);
  EXPECT_TRUE(caught.contradicted) << caught.message;
  EXPECT_NEAR(caught.staging_counted_ns, 30 * (1.71e6 + 27.7e6 - 10.4e6), 1e5);
  EXPECT_GT(caught.floor_ns, 4e6);

  // Without the judgement the requests alone stand beside the claim.
  allowances.max_staging_per_request_ns = std::numeric_limits<double>::infinity();
  const WitnessJudgement through = judge_timing(hidden, 0.1e6, allowances);
  EXPECT_FALSE(through.contradicted) << through.message;
  EXPECT_EQ(through.median_used_ns, 0.1e6);
}

// Staged rounds of cuda-fast kv_cache's perf.decode.l1.h32x8.d128.b16.t4096
// on an H100 (reports/gpu-h100/results.json): 75 rounds of two calls,
// 58.34 ms of timed requests for 41.16 ms claimed, 70.75 ms of staging.
std::vector<WitnessedRequest> fast_decode_rounds() {
  return std::vector<WitnessedRequest>(75, WitnessedRequest{58.34e6 / 75, 0, 2, 41.16e6 / 75, 0, 70.75e6 / 75});
}

WitnessAllowances staged_gpu_allowances() {
  WitnessAllowances a{10e3, witness_per_request_ns("cuda", true), 0};
  a.max_staging_per_request_ns = witness_max_staging_ns("cuda", 2 * 0.53e6);
  return a;
}

// A machine that stalls the harness once (a throttled container, a page
// reclaim) for 100 ms, in one timed request or in one round's staging,
// says nothing about the worker's claim. Summed over every request, the
// stall alone contradicted this honest kernel.
TEST(TimingWitness, OneStalledRequestDoesNotContradictAnHonestClaim) {
  const WitnessAllowances allowances = staged_gpu_allowances();
  const WitnessJudgement honest = judge_timing(fast_decode_rounds(), 0.27e6, allowances);
  EXPECT_FALSE(honest.contradicted) << honest.message;
  EXPECT_EQ(honest.median_excess, 0.0);  // the overhead allowed covers what each request took beyond its calls
  for (const bool in_staging : {false, true}) {
    std::vector<WitnessedRequest> stalled = fast_decode_rounds();
    (in_staging ? stalled[40].staging_ns : stalled[40].ns) += 100e6;
    const WitnessJudgement j = judge_timing(stalled, 0.27e6, allowances);
    EXPECT_FALSE(j.contradicted) << j.message;
    EXPECT_EQ(j.median_used_ns, 0.27e6);
    // What the sum over every request made of it.
    EXPECT_GT(j.left_for_calls_ns, kWitnessMargin * j.claimed_ns) << in_staging;
  }
}

// A forger must under-claim most of its timed calls to move the median
// the scores use; in the requests that hold them the witness sees it.
// Under-claiming fewer leaves that median where the honest calls put it.
TEST(TimingWitness, ClaimsForgedInMostRequestsAreContradictedAndInFewerGainNothing) {
  const WitnessAllowances allowances = staged_gpu_allowances();
  auto forged_in = [&](size_t count) {
    std::vector<WitnessedRequest> requests = fast_decode_rounds();
    std::vector<double> claims;
    for (size_t r = 0; r < requests.size(); ++r) {
      if (r < count) {
        // A real call of 0.27 ms claimed as 0.027, beside a timed request
        // long enough to hold the real one.
        requests[r].ns += 2 * 0.27e6;
        requests[r].claimed_ns /= 10;
      }
      claims.insert(claims.end(), 2, requests[r].claimed_ns / 2);
    }
    return judge_timing(requests, median(claims), allowances);
  };
  const WitnessJudgement most = forged_in(40);
  EXPECT_TRUE(most.contradicted);
  EXPECT_GT(most.median_excess, kWitnessMargin);
  EXPECT_NE(most.message.find("in the median of its 75 requests of timed calls"), std::string::npos) << most.message;
  const WitnessJudgement fewer = forged_in(35);
  EXPECT_FALSE(fewer.contradicted) << fewer.message;
  EXPECT_NEAR(fewer.median_used_ns, 41.16e6 / 150, 1);
}

// A GPU request holds the calls alone when the worker staged its sets or the
// harness copied them into memory it owns: then it is allowed 1 ms and no
// copies, where an unstaged worker's request, which copies its sets itself,
// is allowed 5 ms and the copies at 1 GB/s. Only a worker's staging is judged.
TEST(TimingWitness, RequestsThatHoldTheCallsAloneAreAllowedNoCopies) {
  const double sets = 400e6;
  const WitnessAllowances owned = request_allowances("cuda", false, true, sets);
  EXPECT_EQ(owned.per_request_ns, 1e6);
  EXPECT_EQ(owned.max_setup_per_request_ns, 0.0);
  EXPECT_EQ(owned.max_staging_per_request_ns, 0.0);
  const WitnessAllowances worker = request_allowances("cuda", false, false, sets);
  EXPECT_EQ(worker.per_request_ns, 5e6);
  EXPECT_EQ(worker.max_setup_per_request_ns, 2.0 * sets + 5e6);  // 1 GB/s is 1 byte per ns
  const WitnessAllowances staged = request_allowances("cuda", true, false, sets);
  EXPECT_EQ(staged.per_request_ns, 1e6);
  EXPECT_EQ(staged.max_setup_per_request_ns, 0.0);
  EXPECT_EQ(staged.max_staging_per_request_ns, 2.0 * sets + 2e6);
}

}  // namespace
}  // namespace harness
