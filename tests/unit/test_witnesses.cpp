// The timing and memory witnesses and the byte-model cold judgement: each
// defence against its exploit, and the same figures getting through without
// it.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <vector>

#include "harness/core/stats.h"
#include "harness/memory/shared_buffer.h"
#include "harness/results/results.h"
#include "harness/challenge_api/case_context.h"
#include "harness/witness/device_memory.h"
#include "harness/witness/memory_witness.h"
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
  EXPECT_NE(j.message.find("1.300 ms"), std::string::npos) << j.message;   // the claim
  EXPECT_NE(j.message.find("1200.000 ms"), std::string::npos) << j.message;  // the witness
  // Without the witness the claim is all there is: its median is scored.
  TimingResult unwitnessed{};  // value-initialised: GCC 12 (sanitizer build) misreads the empty optional otherwise
  unwitnessed.summary.median = 26e3;
  EXPECT_EQ(unwitnessed.scored_median_ns(), 26e3);
  TimingResult witnessed = unwitnessed;
  witnessed.witness = TimingResult::Witness{j.request_ns, j.overhead_ns, j.claimed_ns, j.calls, j.floor_ns, 1, false, 0};
  EXPECT_GT(witnessed.scored_median_ns(), 100 * 26e3);
}

// A fast median over an honest sum (a few long claims beside many tiny
// ones) is not contradicted, but the score uses the witness's floor.
TEST(TimingWitness, FloorRaisesAMedianTheSumDoesNotSupport) {
  const WitnessJudgement j =
      judge_timing(one_request(400 + 5 + 2, 100, 90 * 1e3 + 10 * 40e6), 1e3, allowances_of(5e6));
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

// cpu-hidden-xhat-shared keeps its hidden store in a shared mapping: not
// anonymous memory, so RssAnon alone never saw it.
TEST(MemoryWitness, SharedMappingsCountButTheHarnessFilesDoNot) {
  const size_t bytes = size_t{64} << 20;
  const auto anonymous_before = resident_anonymous_bytes(::getpid());
  const auto before = resident_private_bytes(::getpid(), {});
  ASSERT_TRUE(anonymous_before && before);
  void* shared = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  std::memset(shared, 1, bytes);
  const int fd = ::memfd_create("harness-buffer", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(bytes)), 0);
  void* tensor = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(tensor, MAP_FAILED);
  std::memset(tensor, 1, bytes);
  struct stat file{};
  ASSERT_EQ(::fstat(fd, &file), 0);

  const auto anonymous_after = resident_anonymous_bytes(::getpid());
  const auto after = resident_private_bytes(::getpid(), {static_cast<uint64_t>(file.st_ino)});
  ASSERT_TRUE(anonymous_after && after);
  EXPECT_LT(*anonymous_after - *anonymous_before, int64_t{8} << 20);  // unseen by RssAnon alone
  EXPECT_GE(*after - *before, int64_t{60} << 20);                     // the shared mapping
  EXPECT_LT(*after - *before, int64_t{100} << 20);                    // not the harness's file
  ::munmap(tensor, bytes);
  ::munmap(shared, bytes);
  ::close(fd);
}

// A memory file written and never mapped (cpu-hidden-xhat-memfd-file, where
// seccomp lets it make one) is in no resident set: the witness counts the
// memory files a process holds open, the harness's own apart.
TEST(MemoryWitness, MemoryFilesHeldOpenCount) {
  const size_t bytes = size_t{32} << 20;
  const auto before = resident_private_bytes(::getpid(), {});
  ASSERT_TRUE(before);
  const int fd = ::memfd_create("kept", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::vector<char> block(1 << 20, 7);
  for (size_t at = 0; at < bytes; at += block.size()) {
    ASSERT_EQ(::pwrite(fd, block.data(), block.size(), static_cast<off_t>(at)), static_cast<ssize_t>(block.size()));
  }
  struct stat file{};
  ASSERT_EQ(::fstat(fd, &file), 0);
  const auto anonymous = resident_anonymous_bytes(::getpid());
  const auto held = resident_private_bytes(::getpid(), {});
  const auto as_harness_file = resident_private_bytes(::getpid(), {static_cast<uint64_t>(file.st_ino)});
  ::close(fd);
  ASSERT_TRUE(anonymous && held && as_harness_file);
  EXPECT_GE(*held - *before, int64_t{30} << 20);
  EXPECT_LT(*as_harness_file - *before, int64_t{8} << 20);
}

// cpu-hidden-xhat-tensor-file grew one of the harness's tensor files to keep
// memory past its end: the files are sealed at their size.
TEST(MemoryWitness, TheHarnessTensorFilesCannotGrow) {
  SharedBuffer buffer(1, 4096);
  EXPECT_NE(::ftruncate(buffer.fd(), static_cast<off_t>(buffer.total_bytes() + (1 << 20))), 0);
  const char byte = 1;
  EXPECT_NE(::pwrite(buffer.fd(), &byte, 1, static_cast<off_t>(buffer.total_bytes())), 1);
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

namespace harness {
namespace {

TEST(DeviceMemoryWitness, CountsTheDriversGranulesOfEachBuffer) {
  EXPECT_EQ(device_granules(0), 0);
  EXPECT_EQ(device_granules(1), kDeviceGranuleBytes);
  EXPECT_EQ(device_granules(kDeviceGranuleBytes), kDeviceGranuleBytes);
  EXPECT_EQ(device_granules(kDeviceGranuleBytes + 1), 2 * kDeviceGranuleBytes);
}

// cuda-hidden-input-store on an H100 (layernorm perf.forward.normal.r2048.d16384,
// seed 1): two floats per row declared, the input kept in a store of its own.
TEST(DeviceMemoryWitness, AHiddenStoreOfTheInputIsUnderstated) {
  const int64_t bytes = 1224736768, harness_tensors = 557842432, growth = 123731968;
  const MemoryJudgement j = judge_device_memory(16384, bytes - harness_tensors - growth, bytes, harness_tensors);
  EXPECT_TRUE(j.understated);
  EXPECT_EQ(j.witnessed, growth);
  EXPECT_NE(j.message.find("557842432 bytes of copies of the harness's tensors"), std::string::npos) << j.message;
}

// Our cuda-fast layernorm on an H200: the worker's device memory grew by
// 547356672 bytes over a perf case, all of it its copies of the harness's
// tensors (x, y, dy, dx, the saved state...), against a claim of 16384.
// Counted as the submission's, they would fail it.
TEST(DeviceMemoryWitness, TheWorkersCopiesOfTheHarnesssTensorsAreNotTheSubmissions) {
  const int64_t baseline = 600 << 20, copies = 547356672;
  EXPECT_FALSE(judge_device_memory(16384, baseline, baseline + copies, copies).understated);
  EXPECT_TRUE(judge_device_memory(16384, baseline, baseline + copies, 0).understated);
}

}  // namespace
}  // namespace harness
