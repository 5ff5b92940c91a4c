// harness run --sanitize without a GPU: a worker under a stand-in for
// compute-sanitizer (tests/fixtures/sanitizer/fake-compute-sanitizer, which
// runs the worker and writes the report it is told to as the worker ends),
// a worker per case, and the report's first error a finding of the case.
// What the real sanitizer finds in CUDA kernels is tests/gpu.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/core/files.h"
#include "harness/executors/worker_executor.h"
#include "harness/results/results_json.h"
#include "support/test_support.h"

namespace harness {
namespace {

const std::string kSanitizerFixtures = std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/sanitizer/";
const std::string kFakeSanitizer = kSanitizerFixtures + "fake-compute-sanitizer";

std::string softmax_library_named(const std::string& name) {
  for (const SubmissionRecord& r : testing::project_catalog().records()) {
    if (r.challenge == "softmax_topk" && r.name == name) return r.library;
  }
  ADD_FAILURE() << "no softmax_topk submission " << name;
  return "";
}

// One call of cpu-fast's softmax_topk on 4 rows of 64 logits, top 2, checked.
void call_sanitized_softmax(WorkerExecutor& executor) {
  SharedTensor logits(1, TensorSpec{"logits", DType::f32, {4, 64}});
  SharedTensor probs(2, TensorSpec{"probs", DType::f32, {4, 2}});
  SharedTensor indices(3, TensorSpec{"indices", DType::i32, {4, 2}});
  float* x = logits.as<float>();
  for (size_t i = 0; i < logits.elements(); ++i) x[i] = static_cast<float>((i * 37) % 64) / 8.0f;
  executor.begin_case();
  const auto reply = executor.call(
      "softmax_topk", {{"rows", 4}, {"vocab", 64}, {"k", 2}},
      {{&logits, protocol::Access::in}, {&probs, protocol::Access::out}, {&indices, protocol::Access::out}}, 30);
  ASSERT_EQ(reply.status, 0) << reply.message;
  for (int64_t row = 0; row < 4; ++row) {
    const float* xr = x + row * 64;
    EXPECT_EQ(xr[indices.as<int32_t>()[row * 2]], *std::max_element(xr, xr + 64)) << "row " << row;
  }
  for (const SharedTensor* t : {&logits, &probs, &indices}) executor.release(*t);
}

TEST(SanitizedWorker, EachCaseRunsUnderTheSanitizerWhoseReportIsReadAsTheWorkerEnds) {
  testing::TempFolder folder;
  WorkerTarget target =
      testing::cpu_worker_target("softmax_topk", softmax_library_named("cpu-fast"), folder.path("worker.log"));
  target.sanitizer = SanitizerSetting{"memcheck", kFakeSanitizer};
  WorkerExecutor executor(target);

  call_sanitized_softmax(executor);
  EXPECT_TRUE(executor.sanitizer_findings().empty());  // a clean report
  {
    testing::ScopedEnv report("FAKE_SANITIZER_REPORT", kSanitizerFixtures + "memcheck-invalid-write.txt");
    call_sanitized_softmax(executor);
    const std::vector<Finding> found = executor.sanitizer_findings();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].verdict, Verdict::out_of_bounds_write);
    EXPECT_EQ(found[0].message.rfind("compute-sanitizer memcheck: Invalid __global__ write of size 4 bytes", 0), 0u)
        << found[0].message;
  }
  // A worker per case, each with its own report, read once.
  EXPECT_EQ(executor.starts(), 2);
  EXPECT_TRUE(executor.sanitizer_findings().empty());
  // The memory witness reads no sanitizer's memory as the worker's.
  EXPECT_FALSE(executor.resident_bytes());
}

TEST(SanitizedWorker, ASanitizedRunTimesNothingAndSaysWhatRanUnderWhat) {
  testing::TempFolder tmp;
  const auto perf =
      testing::run_cli("run softmax_topk -s cpu-fast --device cpu --sanitize --suite perf -o " + tmp.path("perf.json"),
                       "HARNESS_COMPUTE_SANITIZER=" + kFakeSanitizer);
  EXPECT_EQ(perf.exit_code, 2) << perf.output;
  EXPECT_NE(perf.output.find("--sanitize with --suite perf: a sanitized run times nothing"), std::string::npos)
      << perf.output;

  const auto missing =
      testing::run_cli("run softmax_topk -s cpu-fast --device cpu --sanitize=racecheck -o " + tmp.path("missing.json"),
                       "HARNESS_COMPUTE_SANITIZER=/nonexistent/compute-sanitizer");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no compute-sanitizer found (looked at /nonexistent/compute-sanitizer)"),
            std::string::npos)
      << missing.output;

  // CPU workers are not sanitized; the run records the tool and leaves perf out.
  const auto run = testing::run_cli(
      "run softmax_topk -s cpu-fast --device cpu --quick --sanitize=racecheck --seed 4 "
      "-o " +
          tmp.path("sanitized.json") + " --md " + tmp.path("sanitized.md"),
      "HARNESS_COMPUTE_SANITIZER=" + kFakeSanitizer);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("--sanitize: no CUDA worker runs in this selection"), std::string::npos) << run.output;
  const RunResults results = load_results(tmp.path("sanitized.json"));
  EXPECT_EQ(results.run.options.value("sanitize", ""), "racecheck");
  EXPECT_NE(results.run.sandbox.value("under_sanitizer", "").find("fake-compute-sanitizer (racecheck)"),
            std::string::npos);
  const EntryResult& entry = testing::entry_of(results, "cpu-fast");
  ASSERT_FALSE(entry.cases.empty());
  for (const CaseResult& c : entry.cases) EXPECT_NE(c.suite, Suite::perf) << c.id;
  EXPECT_NE(
      read_text_file(tmp.path("sanitized.md")).find("sanitized: CUDA workers ran under compute-sanitizer racecheck"),
      std::string::npos);
}

}  // namespace
}  // namespace harness
