// Isolation: whatever a submission does (crash, exit, hang, print, throw,
// fail to load), it costs that case or that submission, never the run; the
// worker restarts for the remaining cases.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace harness {
namespace {

using testing::case_of;
using testing::entry_of;

RunResults run_cases(const std::string& submission, const std::vector<std::string>& cases, const Catalog& catalog,
                     double timeout_s = 20) {
  RunSettings settings;
  settings.call_timeout_s = timeout_s;
  return testing::run_softmax_cases(submission, cases, catalog, settings);
}

const std::string kK2 = "correctness.normal.r64.v1024.k2";
const std::string kK5 = "correctness.normal.r64.v1024.k5";
const std::string kK10 = "correctness.normal.r64.v1024.k10";

TEST(Isolation, AnAbortCostsOneCaseAndTheNextCaseRunsInAFreshWorker) {
  const auto r = run_cases("fixture-aborts", {kK2, kK5, kK10}, testing::fixture_catalog());
  const auto& e = entry_of(r, "fixture-aborts");
  EXPECT_EQ(case_of(e, kK2).verdict, Verdict::pass);
  const CaseResult& crashed = case_of(e, kK5);
  EXPECT_EQ(crashed.verdict, Verdict::crash);
  EXPECT_NE(crashed.message.find("killed by signal 6"), std::string::npos) << crashed.message;
  EXPECT_EQ(case_of(e, kK10).verdict, Verdict::pass) << case_of(e, kK10).message;
}

TEST(Isolation, ExitingInsideACallIsACrash) {
  const auto r = run_cases("fixture-exits", {kK2, kK10}, testing::fixture_catalog());
  for (const auto& c : entry_of(r, "fixture-exits").cases) {
    EXPECT_EQ(c.verdict, Verdict::crash);
    EXPECT_NE(c.message.find("exited with code 0"), std::string::npos) << c.message;
  }
}

TEST(Isolation, AHangIsATimeoutAndTheRunGoesOn) {
  const std::string hang = "edge.normal.r1.v1.k1";
  const auto r = run_cases("cpu-mutant-hang-vocab-one", {hang, kK10}, testing::project_catalog(), 1.0);
  const auto& e = entry_of(r, "cpu-mutant-hang-vocab-one");
  EXPECT_EQ(case_of(e, hang).verdict, Verdict::timeout) << case_of(e, hang).message;
  EXPECT_LT(case_of(e, hang).seconds, 10.0);
  EXPECT_EQ(case_of(e, kK10).verdict, Verdict::pass) << case_of(e, kK10).message;
}

TEST(Isolation, OutputOnStdoutIsRecordedAndCannotCorruptTheProtocol) {
  const auto r = run_cases("fixture-noisy", {kK2, kK10}, testing::fixture_catalog());
  for (const auto& c : entry_of(r, "fixture-noisy").cases) {
    EXPECT_EQ(c.verdict, Verdict::pass) << c.message;
    EXPECT_NE(c.worker_output.find("garbage on stdout"), std::string::npos) << c.worker_output;
    EXPECT_NE(c.worker_output.find("debug output on stderr"), std::string::npos);
  }
}

TEST(Isolation, LoadFailuresNameTheirReasonOnEveryCase) {
  const auto mismatch = run_cases("fixture-abi-mismatch", {kK2, kK10}, testing::fixture_catalog());
  for (const auto& c : entry_of(mismatch, "fixture-abi-mismatch").cases) {
    EXPECT_EQ(c.verdict, Verdict::error);
    EXPECT_NE(c.message.find("ABI version 99"), std::string::npos) << c.message;
  }
  const auto missing = run_cases("fixture-missing-symbol", {kK2}, testing::fixture_catalog());
  const auto& c = case_of(entry_of(missing, "fixture-missing-symbol"), kK2);
  EXPECT_EQ(c.verdict, Verdict::error);
  EXPECT_NE(c.message.find("does not export 'softmax_topk_last_error'"), std::string::npos) << c.message;
}

TEST(Isolation, AnExceptionAcrossTheAbiIsAnError) {
  const auto r = run_cases("fixture-throws", {kK2}, testing::fixture_catalog());
  const auto& c = case_of(entry_of(r, "fixture-throws"), kK2);
  EXPECT_EQ(c.verdict, Verdict::error);
  EXPECT_NE(c.message.find("boom from the fixture"), std::string::npos) << c.message;
}

TEST(Isolation, UnsupportedCasesCostCompletenessOnly) {
  const auto r =
      run_cases("fixture-unsupported-large-k", {kK10, "correctness.normal.r64.v1024.k64"}, testing::fixture_catalog());
  const auto& e = entry_of(r, "fixture-unsupported-large-k");
  EXPECT_EQ(case_of(e, kK10).verdict, Verdict::pass);
  EXPECT_EQ(case_of(e, "correctness.normal.r64.v1024.k64").verdict, Verdict::unsupported);
  ASSERT_TRUE(e.scores.has_value());
  EXPECT_DOUBLE_EQ(e.scores->dimensions.at("correctness").score, 100.0);
  EXPECT_DOUBLE_EQ(e.scores->dimensions.at("completeness").score, 50.0);
  EXPECT_FALSE(e.scores->capped);
}

TEST(AntiCheat, SkippingWorkOnBuffersSeenBeforeIsCaughtInTimedRepetitions) {
  const std::string perf = "perf.normal.r256.v131072.k8";
  RunSettings settings;
  settings.timing.max_ms = 200;
  const auto r = testing::run_softmax_cases("fixture-timed-cache", {perf}, testing::fixture_catalog(), settings);
  const auto& c = case_of(entry_of(r, "fixture-timed-cache"), perf);
  EXPECT_EQ(c.verdict, Verdict::unwritten_output) << c.message;
  EXPECT_NE(c.message.find("timed repetitions"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace harness
