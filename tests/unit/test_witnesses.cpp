// The timing and memory witnesses and the byte-model cold judgement: each
// defence against its exploit, and the same figures getting through without
// it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <vector>

#include "harness/results/results.h"
#include "harness/runner/case_context.h"
#include "harness/witness/device_memory.h"
#include "harness/witness/memory_witness.h"
#include "harness/witness/timing_witness.h"

namespace harness {
namespace {

TimingWitness witness_of(double request_ms) {
  TimingWitness w;
  w.request_ns = request_ms * 1e6;
  w.per_call_ns = 20e3;
  w.per_request_ns = 5e6;
  w.max_setup_ns = 1e6;
  return w;
}

TEST(TimingWitness, HonestClaimWithItsOverheadStands) {
  // 100 calls of 2 ms, 40 us between calls, 3 ms for the messages.
  TimingClaim claim{100, 100 * 2e6, 0, 2e6};
  const WitnessJudgement j = judge_timing(claim, witness_of(200 + 4 + 3));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.median_used_ns, 2e6);
  EXPECT_TRUE(j.message.empty()) << j.message;
}

// cpu-forged-reply: 50 calls claimed at 26 us each while the request took
// 1.2 s of the harness's clock.
TEST(TimingWitness, ForgedReplyIsContradictedAndTheMessageNamesBothFigures) {
  TimingClaim claim{50, 50 * 26e3, 0, 26e3};
  const WitnessJudgement j = judge_timing(claim, witness_of(1200));
  EXPECT_TRUE(j.contradicted);
  EXPECT_NE(j.message.find("1.300 ms"), std::string::npos) << j.message;   // the claim
  EXPECT_NE(j.message.find("1200.000 ms"), std::string::npos) << j.message;  // the witness
  // Without the witness the claim is all there is: its median is scored.
  TimingResult unwitnessed;
  unwitnessed.summary.median = claim.median_ns;
  EXPECT_EQ(unwitnessed.scored_median_ns(), 26e3);
  TimingResult witnessed = unwitnessed;
  witnessed.witness = TimingResult::Witness{1200e6, j.overhead_ns, claim.calls_ns, claim.calls, j.floor_ns};
  EXPECT_GT(witnessed.scored_median_ns(), 100 * 26e3);
}

// A fast median over an honest sum (a few long claims beside many tiny
// ones) is not contradicted, but the score uses the witness's floor.
TEST(TimingWitness, FloorRaisesAMedianTheSumDoesNotSupport) {
  TimingClaim claim{100, 90 * 1e3 + 10 * 40e6, 0, 1e3};
  const WitnessJudgement j = judge_timing(claim, witness_of(400 + 5 + 2));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_GT(j.median_used_ns, 2e6);
  EXPECT_NE(j.message.find("floor"), std::string::npos);
}

// A forged reply claiming more calls' time than the request lasted.
// A clock running twice slow in the worker (cpu-exploit-clock-patch, with
// a divisor of 2 instead of 10) on rounds of short calls: figures of
// softmax_topk's perf.normal.r64.v262144.k32 with cpu-fast on a 2-core VM,
// 50 requests of one round (2 calls of 5.1 ms), 0.29 ms per request beyond
// the calls. The claim is half the truth.
TimingWitness short_rounds(const std::string& device_kind) {
  TimingWitness w;
  w.request_ns = 50 * (2 * 5.1e6 + 0.29e6);
  w.per_call_ns = 10e3;
  w.per_request_ns = 50 * witness_per_request_ns(device_kind);
  w.max_setup_ns = 0;
  return w;
}

TEST(TimingWitness, AClockTwiceSlowOnShortRoundsPassedWithTheRequestAllowanceOfAGpu) {
  const TimingClaim claim{100, 100 * 2.55e6, 0, 2.55e6};
  const WitnessJudgement j = judge_timing(claim, short_rounds("cuda"));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.median_used_ns, 2.55e6);  // scored twice as fast as it ran
}

TEST(TimingWitness, AClockTwiceSlowOnShortRoundsIsContradictedOnTheCpu) {
  const TimingClaim claim{100, 100 * 2.55e6, 0, 2.55e6};
  EXPECT_TRUE(judge_timing(claim, short_rounds("cpu")).contradicted);
  // The honest claim of the same calls stands.
  const TimingClaim honest{100, 100 * 5.1e6, 0, 5.1e6};
  const WitnessJudgement j = judge_timing(honest, short_rounds("cpu"));
  EXPECT_FALSE(j.contradicted) << j.message;
  EXPECT_EQ(j.median_used_ns, 5.1e6);
}

TEST(TimingWitness, ClaimLongerThanTheRequestIsContradicted) {
  TimingClaim claim{50, 50 * 26.8e6, 0, 26.8e6};
  const WitnessJudgement j = judge_timing(claim, witness_of(420));
  EXPECT_TRUE(j.contradicted);
  EXPECT_NE(j.message.find("more time than passed"), std::string::npos) << j.message;
}

TEST(TimingWitness, ClaimedCopiesAreCappedByTheSlowestCopyRate) {
  // Claiming 1 s of copies cannot excuse 1 s missing from the calls.
  TimingClaim claim{50, 50 * 1e3, 1e9, 1e3};
  EXPECT_TRUE(judge_timing(claim, witness_of(1000)).contradicted);
}

TEST(MemoryWitness, ReadsThisProcessResidentMemoryGrowing) {
  const auto before = resident_anonymous_bytes(::getpid());
  ASSERT_TRUE(before.has_value());
  std::vector<char> held(64 << 20);
  std::memset(held.data(), 1, held.size());
  const auto after = resident_anonymous_bytes(::getpid());
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(*after - *before, int64_t{60} << 20);
  EXPECT_FALSE(resident_anonymous_bytes(-1).has_value());
}

// cpu-hidden-xhat: 2 floats per row declared (8192 rows: 64 KiB) while xhat
// of 8192 x 4096 floats is held.
TEST(MemoryWitness, HiddenStoreIsUnderstatedAnHonestOneIsNot) {
  const int64_t baseline = int64_t{30} << 20;
  const MemoryJudgement hidden = judge_memory(8192 * 8, baseline, baseline + int64_t{8192} * 4096 * 4);
  EXPECT_TRUE(hidden.understated);
  EXPECT_NE(hidden.message.find("65536"), std::string::npos) << hidden.message;
  EXPECT_NE(hidden.message.find("134217728"), std::string::npos) << hidden.message;
  // A cache reporting its 100 MB pool, holding it and 10 MB besides.
  EXPECT_FALSE(judge_memory(int64_t{100} << 20, baseline, baseline + (int64_t{110} << 20)).understated);
  // Memory given back below the baseline is no growth.
  EXPECT_EQ(judge_memory(0, baseline, baseline - 1000).witnessed, 0);
}

// cpu-replay-attend: kv_cache's quick decode case binds 16 queries and
// outputs (2 x 256 KiB per set, 2 sets) but must read a 512 MiB cache.
TEST(ByteModel, StateTheCallMustReadMakesTheCaseCold) {
  const double set_bytes = 2.0 * 16 * 32 * 128 * 4;
  const double cache_read = 16.0 * 4096 * 2 * 8 * 128 * 4;
  const uint64_t llc = 32u << 20;
  EXPECT_TRUE(judged_cold(set_bytes, 2, ByteModel{cache_read + set_bytes / 2, set_bytes / 2}, llc));
  // Judged on the bound tensors alone (the rule before), it was never cold,
  // so no speed was impossible.
  EXPECT_FALSE(judged_cold(set_bytes, 2, ByteModel{}, llc));
}

}  // namespace
}  // namespace harness

namespace harness {
namespace {

// Without a GPU driver, or for a process that is not on a GPU (this test),
// there is no device-memory reading, and the reason says which.
TEST(DeviceMemoryWitness, AProcessNotOnAGpuHasNoReadingAndSaysWhy) {
  const DeviceMemoryReading reading = device_memory_of_process(::getpid(), 0);
  EXPECT_FALSE(reading.bytes.has_value());
  EXPECT_FALSE(reading.why_not.empty());
}

}  // namespace
}  // namespace harness
