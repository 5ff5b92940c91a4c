// Our CUDA attention submissions (cuda-fast, cuda-naive) and the
// tensor-core kernels (the fixture fixture-cuda-tensor-core), built for the
// warp emulator and judged by the harness on the quick cases: every one
// passes every case.
#include <gtest/gtest.h>

#include "support/emulated_cuda.h"

namespace harness {
namespace {

TEST(EmulatedCudaSubmissions, AttentionReferencesAndTheTensorCoreKernelsPassTheQuickCases) {
  testing::expect_emulated_cuda_verdicts("attention", testing::quick_untimed_selection());
}

}  // namespace
}  // namespace harness
