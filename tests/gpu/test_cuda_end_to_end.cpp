// On a machine with an NVIDIA GPU: our CUDA kernels pass every case and the
// CUDA mutants are caught. Without one these tests skip and say why.
#include <gtest/gtest.h>

#include "gpu/gpu_test_support.h"
#include "harness/results/results_json.h"
#include "support/test_support.h"

namespace harness {
namespace {

TEST(Gpu, OurCudaKernelsPassEveryCorrectnessEdgeAndStabilityCase) {
  REQUIRE_CUDA_DEVICE();
  testing::TempFolder tmp;
  // Every challenge, every CUDA submission that is not a mutant.
  const auto r = testing::run_cli("run --device cuda --suite correctness,edge,stability -o " + tmp.path("gpu.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(Gpu, SelftestCatchesEveryCudaMutant) {
  REQUIRE_CUDA_DEVICE();
  testing::TempFolder tmp;
  const auto r = testing::run_cli("selftest --device cuda -o " + tmp.path("selftest.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// harness run --sanitize: our kernel is clean under memcheck, and a kernel
// whose last block writes a row past its outputs is out_of_bounds_write
// (from the guard bands or the sanitizer, whichever is graver first).
TEST(Gpu, UnderComputeSanitizerOurKernelPassesAndAWritePastTheEndIsCaught) {
  REQUIRE_CUDA_DEVICE();
  testing::TempFolder tmp;
  const std::string out = tmp.path("sanitized.json");
  testing::run_cli(
      "run softmax_topk -s cuda-fast,cuda-mutant-last-block-oob --with-mutants --device cuda --suite "
      "correctness --sanitize --seed 1 -o " +
      out);
  const RunResults results = load_results(out);
  EXPECT_EQ(results.run.options.value("sanitize", ""), "memcheck");
  for (const auto& c : testing::entry_of(results, "cuda-fast").cases) {
    EXPECT_EQ(c.verdict, Verdict::pass) << c.id << ": " << c.message;
  }
  size_t caught = 0;
  for (const auto& c : testing::entry_of(results, "cuda-mutant-last-block-oob").cases) {
    if (c.verdict == Verdict::out_of_bounds_write) ++caught;
  }
  EXPECT_GT(caught, 0u);
}

// The device-memory witness (harness/witness/device_memory.h) sees what our
// CUDA cache holds: the driver's figure for the worker, less its copies of
// the harness's tensors, grows by at least the bytes the cache reports in
// use (a cache's device buffer is allocated before it reports).
TEST(Gpu, TheDeviceMemoryWitnessSeesTheCacheOnTheGpu) {
  REQUIRE_CUDA_DEVICE();
  testing::TempFolder tmp;
  const std::string out = tmp.path("witness.json");
  const auto r = testing::run_cli("run kv_cache -s cuda-fast --device cuda --suite correctness --seed 1 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t witnessed = 0;
  // Held by name: a range-for over entry_of(load_results(out), ...) would
  // outlive the results it points into.
  const RunResults results = load_results(out);
  for (const auto& c : testing::entry_of(results, "cuda-fast").cases) {
    EXPECT_FALSE(c.metrics.contains("device_memory_witness")) << c.id << ": " << c.metrics["device_memory_witness"];
    if (!c.metrics.contains("witnessed_device_memory_bytes")) continue;
    ++witnessed;
    EXPECT_GE(c.metrics["witnessed_device_memory_bytes"].get<int64_t>(), c.metrics.value("bytes_at_peak", int64_t{0}))
        << c.id << ": " << c.metrics.dump();
  }
  EXPECT_GT(witnessed, 0u);
}

}  // namespace
}  // namespace harness
