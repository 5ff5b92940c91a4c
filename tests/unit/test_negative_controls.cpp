// The SPEC's negative controls: zeros, a constant, a copy of the input and
// another seed's correct output must fail every core case of every
// challenge, or the checker cannot be trusted.
#include <gtest/gtest.h>

#include "harness/challenge_api/challenge.h"
#include "support/test_support.h"

namespace harness {
namespace {

TEST(NegativeControls, FailEveryCoreCaseOfEveryChallenge) {
  ASSERT_FALSE(all_challenges().empty());
  for (const auto& challenge : all_challenges()) {
    RunSelection selection;
    selection.challenges = {challenge->name()};
    selection.suites = {Suite::correctness};
    selection.only_mutants = true;
    for (ControlKind kind : all_controls()) selection.submissions.push_back(control_name(kind));
    const RunResults results = testing::run_selection(selection, testing::project_catalog());
    ASSERT_EQ(results.entries.size(), all_controls().size()) << challenge->name();
    for (const auto& entry : results.entries) {
      ASSERT_FALSE(entry.cases.empty());
      for (const auto& c : entry.cases) {
        EXPECT_EQ(c.verdict, Verdict::wrong_answer) << challenge->name() << " " << entry.submission.name << " " << c.id
                                                    << ": " << verdict_name(c.verdict) << " " << c.message;
      }
    }
  }
}

TEST(NegativeControls, OtherSeedAnswersAreWellFormedSoOnlyValuesBetrayThem) {
  // The other-seed control is plausible: distinct in-range indices in
  // order. It must still fail on the values.
  RunSelection selection;
  selection.challenges = {"softmax_topk"};
  selection.submissions = {"control-other-seed"};
  selection.case_ids = {"correctness.normal.r64.v1024.k10"};
  const RunResults results = testing::run_selection(selection, testing::project_catalog());
  const CaseResult& c =
      testing::case_of(testing::entry_of(results, "control-other-seed"), "correctness.normal.r64.v1024.k10");
  EXPECT_EQ(c.verdict, Verdict::wrong_answer);
  EXPECT_EQ(c.message.find("outside [0, vocab)"), std::string::npos) << c.message;
  EXPECT_EQ(c.message.find("repeated indices"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("not a top-k"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace harness
