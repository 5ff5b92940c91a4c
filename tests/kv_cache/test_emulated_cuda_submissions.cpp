// Our CUDA kv caches (cuda-fast, its fp16 form, cuda-naive) and the CUDA
// mutants, built for the warp emulator and judged by the harness: the
// references pass, each mutant gets its declared verdict. On the cases
// with a few heads of one or two layers: a decode step of 32 query heads
// over thousands of tokens takes the emulator a minute or more.
#include <gtest/gtest.h>

#include "support/emulated_cuda.h"

namespace harness {
namespace {

TEST(EmulatedCudaSubmissions, KvCacheReferencesPassAndEachMutantGetsItsVerdict) {
  RunSelection selection;
  selection.case_ids = {"correctness.single.l1.h4x4.d64", "correctness.chunked_prefill.l1.h4x4.d128",
                        "edge.over_budget.l1.h4x4.d64", "edge.capacity.l1.h4x4.d64",
                        "edge.capacity_after_churn.l1.h4x4.d64"};
  testing::expect_emulated_cuda_verdicts("kv_cache", selection);
}

}  // namespace
}  // namespace harness
