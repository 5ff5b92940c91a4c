// harness run --sanitize (harness/sanitize): finding compute-sanitizer, the
// command that runs a worker under it, and the verdict of its report's first
// error. The reports are tests/fixtures/sanitizer/*.txt, in the sanitizer's
// format.
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/sanitize/compute_sanitizer.h"
#include "support/test_support.h"

namespace harness {
namespace {

const std::string kReports = std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/sanitizer/";

std::optional<SanitizerFinding> finding_in(const std::string& tool, const std::string& file) {
  return first_sanitizer_finding(tool, read_text_file(kReports + file));
}

TEST(ComputeSanitizer, AnInvalidWriteIsOutOfBoundsWithItsFirstReportQuoted) {
  const auto f = finding_in("memcheck", "memcheck-invalid-write.txt");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::out_of_bounds_write);
  EXPECT_EQ(f->message.rfind("compute-sanitizer memcheck: Invalid __global__ write of size 4 bytes; at "
                             "softmax_topk_kernel(",
                             0),
            0u)
      << f->message;
  EXPECT_NE(f->message.find("cuda_mutable.cu:212; by thread (31,0,0) in block (255,0,0); Address 0x7f3a2c500000 is "
                            "out of bounds; and is 1048577 bytes after the nearest allocation"),
            std::string::npos)
      << f->message;
  // The first error's report alone, then the summary; not the second error,
  // nor the line saying the worker was stopped.
  EXPECT_EQ(f->message.find("thread (30,0,0)"), std::string::npos) << f->message;
  EXPECT_EQ(f->message.find("didn't terminate"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("(ERROR SUMMARY: 2 errors)"), std::string::npos) << f->message;
}

TEST(ComputeSanitizer, AnInvalidReadIsAnInvalidAccessAndAFailedApiCallIsNoFinding) {
  const auto f = finding_in("memcheck", "memcheck-invalid-read.txt");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::invalid_memory_access);
  EXPECT_NE(f->message.find("Invalid __global__ read of size 16 bytes"), std::string::npos) << f->message;
  EXPECT_EQ(f->message.find("cudaErrorInvalidValue"), std::string::npos) << f->message;
}

TEST(ComputeSanitizer, ARaceIsADataRaceAndAWarningAloneIsNot) {
  const auto f = finding_in("racecheck", "racecheck-race.txt");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::data_race);
  EXPECT_EQ(f->message.rfind("compute-sanitizer racecheck: Error: Race reported between Write access", 0), 0u)
      << f->message;
  EXPECT_NE(f->message.find("[2048 hazards] (RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning))"),
            std::string::npos)
      << f->message;
  const std::string report = read_text_file(kReports + "racecheck-race.txt");
  EXPECT_FALSE(first_sanitizer_finding("racecheck", report.substr(0, report.find("========= Error:"))));
}

TEST(ComputeSanitizer, ACleanReportOrAStoppedWorkerIsNoFinding) {
  EXPECT_FALSE(first_sanitizer_finding("memcheck", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"));
  EXPECT_FALSE(first_sanitizer_finding(
      "memcheck",
      "========= COMPUTE-SANITIZER\n========= Error: process didn't terminate successfully\n========= Target "
      "application returned an error\n========= ERROR SUMMARY: 0 errors\n"));
  EXPECT_FALSE(first_sanitizer_finding("memcheck", ""));
}

TEST(ComputeSanitizer, TheWorkerRunsUnderItsToolWithTheReportInAFile) {
  const SanitizerSetting setting{"racecheck", "/opt/cuda/bin/compute-sanitizer"};
  EXPECT_EQ(sanitizer_arguments(setting, "/run/w.log.sanitizer-1.txt", "/b/harness-worker", {"--device", "cuda"}),
            (std::vector<std::string>{"--tool", "racecheck", "--log-file", "/run/w.log.sanitizer-1.txt",
                                      "--print-limit", "10", "--target-processes", "application-only",
                                      "/b/harness-worker", "--device", "cuda"}));
}

TEST(ComputeSanitizer, TheSanitizerIsFoundWhereNamedOrTheRunIsRefusedSayingWhere) {
  {
    testing::ScopedEnv named("HARNESS_COMPUTE_SANITIZER", kReports + "fake-compute-sanitizer");
    const SanitizerSetting s = resolve_sanitizer("memcheck");
    EXPECT_EQ(s.program, kReports + "fake-compute-sanitizer");
    EXPECT_EQ(s.tool, "memcheck");
    try {
      resolve_sanitizer("initcheck");
      FAIL() << "initcheck was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("the tools are memcheck (the default) and racecheck"), std::string::npos);
    }
  }
  testing::ScopedEnv missing("HARNESS_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer");
  try {
    resolve_sanitizer("memcheck");
    FAIL() << "a sanitizer that does not exist was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no compute-sanitizer found (looked at /nonexistent/compute-sanitizer)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace harness
