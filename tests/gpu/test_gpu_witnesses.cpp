// The witnesses on a GPU: timed requests that hold the calls alone (the
// copies of their sets in requests of their own, whose time beyond what
// the copies may take counts as the calls'), and the device memory a worker
// holds beyond its claim judged. Each is shown to be what stops its
// exploit by switching it off (HARNESS_WITNESS_DISABLE). Without a GPU these
// tests skip and say why.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "gpu/gpu_test_support.h"
#include "harness/definitions/verdict.h"
#include "harness/results/results_json.h"
#include "harness/witness/timing_witness.h"
#include "support/test_support.h"

namespace harness {
namespace {

struct WitnessFigures {
  bool staged = false;
  double staging_ns = 0;
  double staging_counted_ns = 0;           // staging beyond what the copies may take
  double beyond_calls_per_request_ns = 0;  // (request_ns - calls_ns) / requests
  double median_excess = -1;               // the median request's time left for its calls over their claim
};

WitnessFigures timed_softmax(const std::string& environment) {
  testing::TempFolder tmp;
  const std::string out = tmp.path("timed.json");
  const auto r = testing::run_cli(
      "run softmax_topk -s cuda-fast --device cuda --case perf.normal.r256.v131072.k8 --seed 1 -o " + out, environment);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const RunResults results = load_results(out);
  const CaseResult& c = testing::case_of(testing::entry_of(results, "cuda-fast"), "perf.normal.r256.v131072.k8");
  EXPECT_EQ(c.verdict, Verdict::pass) << c.message;
  WitnessFigures f;
  if (!c.timing || !c.timing->witness) {
    ADD_FAILURE() << "no witness recorded";
    return f;
  }
  const auto& w = *c.timing->witness;
  f.staged = w.staged;
  f.staging_ns = w.staging_ns;
  f.staging_counted_ns = w.staging_counted_ns;
  f.beyond_calls_per_request_ns = (w.request_ns - w.calls_ns) / static_cast<double>(w.requests);
  f.median_excess = w.median_excess.value_or(-1);
  std::printf(
      "%s: staged %d, %zu requests, %.3f ms beyond the calls per request, %.3f ms of staging (%.3f ms "
      "allowed a round, 0: unlimited), %.3f ms of it counted, median excess %.2f\n",
      environment.empty() ? "default" : environment.c_str(), f.staged ? 1 : 0, w.requests,
      f.beyond_calls_per_request_ns / 1e6, f.staging_ns / 1e6, w.staging_allowed_ns.value_or(0) / 1e6,
      f.staging_counted_ns / 1e6, f.median_excess);
  return f;
}

TEST(GpuWitness, TimedRequestsHoldTheCallsAloneWithinTheAllowanceOfARequest) {
  REQUIRE_CUDA_DEVICE();
  const WitnessFigures staged = timed_softmax("");
  EXPECT_TRUE(staged.staged);
  EXPECT_GT(staged.staging_ns, 0.0);
  // An honest round's copies take what copies take (witness_max_staging_ns).
  EXPECT_EQ(staged.staging_counted_ns, 0.0);
  EXPECT_LT(staged.beyond_calls_per_request_ns, witness_per_request_ns("cuda", true));
  // Recorded, and an honest claim's median request well inside the margin.
  EXPECT_GE(staged.median_excess, 0.0);
  EXPECT_LT(staged.median_excess, kWitnessMargin);
  // Unstaged, each request also copies its two 134 MB sets to the device and
  // back: far more than the calls' allowance, which only the copies'
  // allowance (1 GB/s) covers, and with it any claim.
  const WitnessFigures unstaged = timed_softmax("HARNESS_WITNESS_DISABLE=gpu-staging");
  EXPECT_FALSE(unstaged.staged);
  EXPECT_GT(unstaged.beyond_calls_per_request_ns, witness_per_request_ns("cuda", true));
}

// The verdict of one case of an exploit on the GPU, with `environment`;
// prints it with its message and the witnesses' figures.
Verdict verdict_on_gpu(const std::string& challenge, const std::string& submission, const std::string& case_id,
                       const std::string& environment) {
  testing::TempFolder tmp;
  const std::string out = tmp.path("exploit.json");
  testing::run_cli(
      fmt::format("run {} -s {} --device cuda --case {} --seed 1 -o {}", challenge, submission, case_id, out),
      environment);
  const RunResults results = load_results(out);
  const CaseResult& c = testing::case_of(testing::entry_of(results, submission), case_id);
  const nlohmann::json as_json = to_json(c);
  nlohmann::json witness;
  if (as_json.contains("timing") && as_json["timing"].is_object())
    witness = as_json["timing"].value("witness", nlohmann::json());
  std::printf("%s %s: %s %s (witnessed device memory %s, host memory %s; timing witness %s)\n", submission.c_str(),
              environment.empty() ? "default" : environment.c_str(), std::string(verdict_name(c.verdict)).c_str(),
              c.message.c_str(), c.metrics.value("witnessed_device_memory_bytes", nlohmann::json()).dump().c_str(),
              c.metrics.value("witnessed_host_memory_bytes", nlohmann::json()).dump().c_str(), witness.dump().c_str());
  return c.verdict;
}

// cuda-hidden-input-store keeps a copy of every forward's input (134 MB at
// 2048 x 16384) outside the two floats per row it declares.
TEST(GpuWitness, AHiddenDeviceStoreIsUnderstatedMemoryAndGetsThroughWithoutTheVerdict) {
  REQUIRE_CUDA_DEVICE();
  const auto verdict_of = [](const std::string& environment) {
    return verdict_on_gpu("layernorm_backward", "cuda-hidden-input-store", "perf.forward.normal.r2048.d16384",
                          environment);
  };
  EXPECT_EQ(verdict_of(""), Verdict::understated_memory);
  EXPECT_EQ(verdict_of("HARNESS_WITNESS_DISABLE=device-memory-verdict"), Verdict::pass);
}

// cuda-hidden-host-store and cuda-hidden-pinned-store keep the same copy
// (134 MB) in host memory, pageable and pinned: the device memory they hold
// is what they claim, their workers' host memory is not.
TEST(GpuWitness, HiddenHostStoresAreUnderstatedMemoryAndGetThroughWithoutTheVerdict) {
  REQUIRE_CUDA_DEVICE();
  for (const char* exploit : {"cuda-hidden-host-store", "cuda-hidden-pinned-store"}) {
    const auto verdict_of = [&](const std::string& environment) {
      return verdict_on_gpu("layernorm_backward", exploit, "perf.forward.normal.r2048.d16384", environment);
    };
    EXPECT_EQ(verdict_of(""), Verdict::understated_memory) << exploit;
    EXPECT_EQ(verdict_of("HARNESS_WITNESS_DISABLE=gpu-host-memory-verdict"), Verdict::pass) << exploit;
  }
}

// cuda-work-in-download does each timed attend's work (and 20 ms more) while
// the download after the timed request waits, and claims a fast kernel's time.
TEST(GpuWitness, WorkHiddenInTheDownloadIsForgedTimingAndGetsThroughWithoutTheStagingJudged) {
  REQUIRE_CUDA_DEVICE();
  const auto verdict_of = [](const std::string& environment) {
    return verdict_on_gpu("kv_cache", "cuda-work-in-download", "perf.decode.l1.h32x8.d128.b16.t4096", environment);
  };
  EXPECT_EQ(verdict_of(""), Verdict::forged_timing);
  EXPECT_EQ(verdict_of("HARNESS_WITNESS_DISABLE=gpu-staging-time"), Verdict::pass);
}

// In CUDA memory the harness owns (HARNESS_DEVICE_MEMORY=harness) there is
// no download request for cuda-work-in-download to hide its attends in: the
// harness reads the twins at each reply and finds them unanswered. Our own
// kernel passes the same case there, its requests holding the calls alone
// with no staging of the worker's.
TEST(GpuWitness, InMemoryTheHarnessOwnsWorkHiddenInTheDownloadAnswersNothing) {
  REQUIRE_CUDA_DEVICE();
  const std::string owned = "HARNESS_DEVICE_MEMORY=harness";
  EXPECT_EQ(verdict_on_gpu("kv_cache", "cuda-work-in-download", "perf.decode.l1.h32x8.d128.b16.t4096", owned),
            Verdict::unwritten_output);
  EXPECT_EQ(verdict_on_gpu("kv_cache", "cuda-fast", "perf.decode.l1.h32x8.d128.b16.t4096", owned), Verdict::pass);
  const WitnessFigures f = timed_softmax(owned);
  EXPECT_FALSE(f.staged);
  EXPECT_EQ(f.staging_ns, 0.0);
}

// A kernel's write 1 MiB past probs (fixture-cuda-write-far-past-end): in
// CUDA memory the harness owns it lands in the margin around the twin, and
// every case names it; in the worker's own device copies it lands where
// nothing the harness checks is (those cases pass or crash, never this
// verdict).
TEST(GpuWitness, AWriteFarPastAnOutputIsFoundInTheMarginOfItsCudaTwin) {
  REQUIRE_CUDA_DEVICE();
  testing::TempFolder tmp;
  const std::string run =
      "run softmax_topk -s fixture-cuda-write-far-past-end --device cuda --suite correctness --quick --seed 5 -o ";
  testing::run_cli(run + tmp.path("twins.json"), testing::kFixtureIndexEnvironment + " HARNESS_DEVICE_MEMORY=harness");
  const RunResults twins = load_results(tmp.path("twins.json"));
  const EntryResult& owned = testing::entry_of(twins, "fixture-cuda-write-far-past-end");
  ASSERT_FALSE(owned.cases.empty());
  for (const CaseResult& c : owned.cases) {
    EXPECT_EQ(c.verdict, Verdict::out_of_bounds_write) << c.id << ": " << c.message;
    EXPECT_NE(c.message.find("allocated around 'probs', the nearest 1.0 MiB past the end of its data"),
              std::string::npos)
        << c.message;
  }
  testing::run_cli(run + tmp.path("worker.json"), testing::kFixtureIndexEnvironment);
  const RunResults worker = load_results(tmp.path("worker.json"));
  for (const CaseResult& c : testing::entry_of(worker, "fixture-cuda-write-far-past-end").cases) {
    std::printf("worker-owned memory: %s %s %s\n", c.id.c_str(), std::string(verdict_name(c.verdict)).c_str(),
                c.message.substr(0, 160).c_str());
    EXPECT_NE(c.verdict, Verdict::out_of_bounds_write) << c.id << ": " << c.message;
  }
}

}  // namespace
}  // namespace harness
