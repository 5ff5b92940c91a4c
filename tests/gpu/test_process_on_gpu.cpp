// A process submission on a GPU (protocol 2, "device": "cuda"): the Python
// client opens the harness's CUDA twins by IPC handle and hands PyTorch
// tensors on them to the submission's function. Skips without a CUDA device
// or an interpreter that imports torch, saying which.
#include <gtest/gtest.h>

#include "gpu/gpu_test_support.h"
#include "harness/results/results_json.h"
#include "support/test_support.h"

namespace harness {
namespace {

TEST(GpuProcess, APyTorchSubmissionComputesInTheHarnesssDeviceMemoryAndPasses) {
  REQUIRE_CUDA_DEVICE();
  testing::TempFolder tmp;
  testing::run_cli("run softmax_topk -s fixture-process-torch --device cuda --suite correctness --quick --seed 3 -o " +
                       tmp.path("torch.json"),
                   testing::kFixtureIndexEnvironment);
  const RunResults results = load_results(tmp.path("torch.json"));
  const EntryResult& entry = testing::entry_of(results, "fixture-process-torch");
  if (entry.build.status == "unavailable") GTEST_SKIP() << "no interpreter here imports torch: " << entry.build.reason;
  ASSERT_FALSE(entry.cases.empty());
  for (const CaseResult& c : entry.cases) {
    EXPECT_EQ(c.verdict, Verdict::pass) << c.id << ": " << c.message << " " << c.worker_output;
  }
}

// PyTorch's caching allocator keeps a freed 128 MiB output of this forward;
// read without the client's trim first, the driver's figure counted it as
// state the peer did not declare (understated_memory, on an H200).
TEST(GpuProcess, FreedMemoryAnArrayLibraryCachesIsNotCountedAsItsState) {
  REQUIRE_CUDA_DEVICE();
  testing::TempFolder tmp;
  testing::run_cli(
      "run layernorm_backward -s pytorch-eager --device cuda --case perf.forward.normal.r2048.d16384 "
      "--seed 3 -o " +
      tmp.path("eager.json"));
  const RunResults results = load_results(tmp.path("eager.json"));
  const EntryResult& entry = testing::entry_of(results, "pytorch-eager");
  if (entry.build.status == "unavailable") GTEST_SKIP() << "no interpreter here imports torch: " << entry.build.reason;
  ASSERT_EQ(entry.cases.size(), 1u);
  EXPECT_EQ(entry.cases[0].verdict, Verdict::pass) << entry.cases[0].message;
}

}  // namespace
}  // namespace harness
