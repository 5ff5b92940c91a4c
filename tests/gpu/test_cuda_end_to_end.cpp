// On a machine with an NVIDIA GPU: our CUDA kernels pass every case and the
// CUDA mutants are caught. Without one these tests skip and say why.
#include <gtest/gtest.h>

#include "harness/device/device_info.h"
#include "support/test_support.h"

namespace harness {
namespace {

std::string cuda_missing_reason() {
  for (const auto& d : discover_devices()) {
    if (d.kind != "cuda") continue;
    if (d.available) return "";
    return d.unavailable_reason;
  }
  return "no CUDA entry";
}

#define REQUIRE_CUDA_DEVICE()                                                   \
  do {                                                                          \
    const std::string reason = cuda_missing_reason();                           \
    if (!reason.empty()) GTEST_SKIP() << "no CUDA device here: " << reason;     \
  } while (false)

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

}  // namespace
}  // namespace harness
