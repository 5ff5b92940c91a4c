// Our CUDA layernorm_backward submissions (cuda-fast, cuda-naive) and the
// CUDA mutants the emulator can show (not the dgamma race: it runs blocks
// one after another), built for the warp emulator and judged by the harness
// on the quick cases: the references pass, each mutant gets its declared
// verdict.
#include <gtest/gtest.h>

#include "support/emulated_cuda.h"

namespace harness {
namespace {

TEST(EmulatedCudaSubmissions, LayernormReferencesPassAndEachMutantGetsItsVerdict) {
  testing::expect_emulated_cuda_verdicts("layernorm_backward", testing::quick_untimed_selection());
}

}  // namespace
}  // namespace harness
