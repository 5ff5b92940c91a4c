// Our CUDA softmax_topk submissions (cuda-fast, cuda-naive) and the CUDA
// mutants, built for the warp emulator and judged by the harness on the
// quick cases and one whose rows leave the last block of two rows half
// empty (where cuda-mutant-last-block-oob writes past the outputs): the
// references pass, each mutant gets its declared verdict.
#include <gtest/gtest.h>

#include "support/emulated_cuda.h"

namespace harness {
namespace {

TEST(EmulatedCudaSubmissions, SoftmaxTopkReferencesPassAndEachMutantGetsItsVerdict) {
  testing::expect_emulated_cuda_verdicts("softmax_topk", testing::quick_untimed_selection(),
                                         {"correctness.normal.r3.v131072.k64"});
}

}  // namespace
}  // namespace harness
