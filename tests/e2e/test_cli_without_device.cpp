// CUDA submissions on a machine without a GPU (most CI machines): each is
// still judged on its build. A build that fails fails the run with the
// compiler's first errors; one that builds is listed as not run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/core/files.h"
#include "harness/device/device_info.h"
#include "harness/results/results_json.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::kFixtureIndexEnvironment;
using testing::run_cli;
using testing::TempFolder;

const std::string kNoDeviceCase = "correctness.normal.r64.v1024.k10";
// What nvcc says about the kernel the fixture calls but never declares.
const std::string kCompilerError = "identifier \"topk_rows_kernel_renamed\" is undefined";

const SubmissionRecord& record_of(const Catalog& catalog, const std::string& name) {
  for (const auto& r : catalog.records()) {
    if (r.name == name) return r;
  }
  throw std::runtime_error("no submission " + name);
}

bool have_cuda_device() {
  for (const auto& d : discover_devices()) {
    if (d.kind == "cuda" && d.available) return true;
  }
  return false;
}

#define REQUIRE_CUDA_COMPILER(record)                                                           \
  if ((record).build.status == "unavailable")                                                   \
  GTEST_SKIP() << "no CUDA compiler at configure time: CUDA submissions cannot be built here (" \
               << (record).build.reason << ")"

// The exploit of the old behaviour: without a device, a CUDA submission that
// does not compile was left out and the run exited 0 with an empty report.
TEST(WithoutDevice, ACudaSubmissionThatDoesNotCompileFailsTheRunWithItsCompilerError) {
  const SubmissionRecord& record = record_of(testing::fixture_catalog(), "fixture-cuda-does-not-compile");
  REQUIRE_CUDA_COMPILER(record);
  ASSERT_EQ(record.build.status, "failed") << record.build.reason;
  TempFolder tmp;
  // No --device: the default run of a CI machine, with or without a GPU.
  const auto r = run_cli(fmt::format("run softmax_topk -s fixture-cuda-does-not-compile --case {} -o {} --md {}",
                                     kNoDeviceCase, tmp.path("r.json"), tmp.path("r.md")),
                         kFixtureIndexEnvironment);
  EXPECT_EQ(r.exit_code, 1) << "a failed build fails the run\n" << r.output;
  EXPECT_NE(r.output.find("build_failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(kCompilerError), std::string::npos) << "the console shows the error\n" << r.output;

  const RunResults results = load_results(tmp.path("r.json"));
  ASSERT_EQ(results.entries.size(), 1u);
  const EntryResult& e = results.entries[0];
  EXPECT_EQ(e.build.status, "failed");
  EXPECT_NE(e.build.log_excerpt.find(kCompilerError), std::string::npos) << e.build.log_excerpt;
  EXPECT_TRUE(file_exists(e.build.log_path)) << e.build.log_path;
  ASSERT_EQ(e.cases.size(), 1u);
  EXPECT_EQ(e.cases[0].verdict, Verdict::build_failed);
  EXPECT_NE(e.cases[0].message.find(kCompilerError), std::string::npos) << e.cases[0].message;
  EXPECT_NE(e.cases[0].message.find("full log: " + e.build.log_path), std::string::npos) << e.cases[0].message;

  const std::string md = read_text_file(tmp.path("r.md"));
  EXPECT_NE(md.find("fixture-cuda-does-not-compile"), std::string::npos);
  EXPECT_NE(md.find(kCompilerError), std::string::npos) << md;
  EXPECT_NE(md.find("full build log: `" + e.build.log_path + "`"), std::string::npos) << md;
}

TEST(WithoutDevice, ListShowsTheCompilersFirstErrorsAndTheLog) {
  const SubmissionRecord& record = record_of(testing::fixture_catalog(), "fixture-cuda-does-not-compile");
  REQUIRE_CUDA_COMPILER(record);
  const auto r = run_cli("list softmax_topk", kFixtureIndexEnvironment);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(kCompilerError), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("full log: " + record.build.log_path), std::string::npos) << r.output;
}

TEST(WithoutDevice, ACudaSubmissionThatBuiltIsShownAsNotRun) {
  if (have_cuda_device()) GTEST_SKIP() << "a CUDA device is present: its submissions run (tests/gpu)";
  const SubmissionRecord& record = record_of(testing::project_catalog(), "cuda-naive");
  REQUIRE_CUDA_COMPILER(record);
  ASSERT_EQ(record.build.status, "ok") << record.build.reason;
  TempFolder tmp;
  const auto r = run_cli(fmt::format("run softmax_topk -s cuda-naive --case {} -o {} --md {}", kNoDeviceCase,
                                     tmp.path("r.json"), tmp.path("r.md")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("judged on their build only"), std::string::npos) << r.output;
  const RunResults results = load_results(tmp.path("r.json"));
  ASSERT_EQ(results.entries.size(), 1u) << "not an empty report";
  const EntryResult& e = results.entries[0];
  EXPECT_EQ(e.build.status, "ok");
  ASSERT_EQ(e.cases.size(), 1u);
  EXPECT_EQ(e.cases[0].verdict, Verdict::unavailable);
  EXPECT_NE(e.cases[0].message.find("not run: no cuda device"), std::string::npos) << e.cases[0].message;
  EXPECT_FALSE(e.scores.has_value()) << "nothing judged: no score, not 0.0 F";
  const std::string md = read_text_file(tmp.path("r.md"));
  EXPECT_NE(md.find("cuda-naive"), std::string::npos);
  EXPECT_EQ(md.find("0.0 F"), std::string::npos) << md;
  EXPECT_NE(md.find("1 unavailable"), std::string::npos) << md;
}

}  // namespace
}  // namespace harness
