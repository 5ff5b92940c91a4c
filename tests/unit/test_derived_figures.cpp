// Stored results re-derived, not trusted: a file whose verdicts or scores
// were edited disagrees with its own evidence and is refused, naming where.
#include <gtest/gtest.h>

#include "harness/compare/derived_figures.h"
#include "harness/core/error.h"
#include "harness/results/results_json.h"
#include "harness/scoring/scoring.h"

namespace harness {
namespace {

const std::string kGolden = std::string(HARNESS_SOURCE_DIR) + "/tests/golden/run_a.json";

EntryResult& entry_named(RunResults& r, const std::string& submission) {
  for (EntryResult& e : r.entries) {
    if (e.submission.name == submission) return e;
  }
  throw std::runtime_error("no entry " + submission);
}

std::string refusal(const RunResults& r) {
  try {
    check_derived_figures(r, "r.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(DerivedFigures, ResultsThatAgreeWithThemselvesPass) { EXPECT_EQ(refusal(load_results(kGolden)), ""); }

TEST(DerivedFigures, AnEditedScoreIsRefusedNamingTheEntry) {
  RunResults r = load_results(kGolden);
  entry_named(r, "cpu-mutant-rows-mixed").scores->overall = 100;
  entry_named(r, "cpu-mutant-rows-mixed").scores->grade = "A+";
  EXPECT_NE(refusal(r).find("r.json: softmax_topk / cpu-mutant-rows-mixed on cpu: the stored overall 100.0000 (A+) "
                            "is not what its cases give, 20.0000"),
            std::string::npos)
      << refusal(r);

  RunResults dimension = load_results(kGolden);
  entry_named(dimension, "cpu-fast").scores->dimensions["performance"].score = 99;
  EXPECT_NE(refusal(dimension).find("cpu-fast on cpu: the stored performance score 99.0000"), std::string::npos)
      << refusal(dimension);
}

// An edited verdict changes what the cases give: the stored scores then
// disagree. Re-scored to hide it, the edit still fails where the case
// recorded how far beyond its tolerance its error was.
TEST(DerivedFigures, AnEditedVerdictIsRefusedEvenWithItsScoresMadeToMatch) {
  RunResults r = load_results(kGolden);
  CaseResult& c = entry_named(r, "cpu-mutant-rows-mixed").cases.front();
  ASSERT_EQ(c.verdict, Verdict::wrong_answer);
  c.verdict = Verdict::pass;
  EXPECT_NE(refusal(r).find("cpu-mutant-rows-mixed on cpu: the stored"), std::string::npos) << refusal(r);

  score_results(r);  // the scores made to match the edited verdict
  // Without a recorded error the consistent edit cannot be seen from the
  // file: the check can only hold a file to its own evidence.
  EXPECT_EQ(refusal(r), "");
  c.metrics["probs_tolerance_used"] = 3.2;  // what a failing value check records
  EXPECT_NE(refusal(r).find("cpu-mutant-rows-mixed on cpu case correctness.normal.r64.v1024.k10: the verdict says "
                            "pass, but its probs_tolerance_used of 3.2 is beyond its tolerance"),
            std::string::npos)
      << refusal(r);
  c.verdict = Verdict::wrong_answer;
  score_results(r);
  EXPECT_EQ(refusal(r), "") << "the metric on a failing case is no disagreement";
}

}  // namespace
}  // namespace harness
