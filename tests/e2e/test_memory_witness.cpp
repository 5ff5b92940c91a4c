// The memory witness of a CPU worker counts from before the submission's
// library loaded, in a worker started for the case: memory a library takes
// while loading, or kept from an earlier case, is no longer outside it.
#include <gtest/gtest.h>

#include <cstdint>

#include "harness/runner/worker_executor.h"
#include "harness/witness/memory_witness.h"
#include "support/test_support.h"

namespace harness {
namespace {

const SubmissionRecord* project_submission(const std::string& name) {
  for (const SubmissionRecord& r : testing::project_catalog().records()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(MemoryWitness, AStoreTakenWhileTheLibraryLoadsIsSeenOnlyFromBeforeTheLoad) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "no memory witness in a sanitizer build";
  // cpu-hidden-xhat-preloaded: a constructor takes and fills 64 MiB as the
  // library loads, and the forward keeps xhat there.
  const SubmissionRecord* exploit = project_submission("cpu-hidden-xhat-preloaded");
  ASSERT_NE(exploit, nullptr);
  ASSERT_FALSE(exploit->library.empty()) << "not built: " << exploit->build_log_path;
  testing::TempFolder folder;
  WorkerTarget target;
  target.challenge = "layernorm_backward";
  target.library = exploit->library;
  target.device_kind = "cpu";
  target.worker_executable = std::string(HARNESS_BUILD_DIR) + "/harness-worker";
  target.log_path = folder.path("worker.log");
  WorkerExecutor executor(target);

  const std::optional<int64_t> after_load = executor.resident_bytes();  // starts the worker
  const std::optional<int64_t> before_load = executor.resident_before_load();
  ASSERT_TRUE(after_load && before_load);
  EXPECT_GE(*after_load - *before_load, int64_t{64} << 20);
  // Two floats per row of edge.normal.r65536.d64 declared: from a baseline
  // taken after loading (the witness's before) the store is not growth and
  // gets through; from before the load it is far beyond the claim.
  const int64_t claimed = 65536 * 8;
  EXPECT_FALSE(judge_memory(claimed, *after_load, *after_load).understated);
  EXPECT_TRUE(judge_memory(claimed, *before_load, *after_load).understated);

  // The next case runs in a fresh worker, with a baseline of its own.
  executor.begin_case();
  EXPECT_FALSE(executor.resident_before_load().has_value());
  ASSERT_TRUE(executor.resident_bytes().has_value());
  EXPECT_TRUE(executor.resident_before_load().has_value());
  EXPECT_EQ(executor.starts(), 2);
}

}  // namespace
}  // namespace harness
