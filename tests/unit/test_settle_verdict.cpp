// settle_verdict: a case that found several things wrong is judged by the
// gravest of them, the others listed.
#include <gtest/gtest.h>

#include "harness/runner/failure_verdict.h"

namespace harness {
namespace {

// A case that found several things wrong is judged by the gravest: a wrong
// answer before a false memory claim found earlier, a crash before both;
// the rest listed, gravest first.
TEST(SettleVerdict, TheGravestFindingIsTheVerdictAndTheOthersAreListed) {
  CaseResult noted;
  noted.other_failures = {{Verdict::understated_memory, "claimed 16 KiB, held 128 MiB"}};
  noted.verdict = Verdict::wrong_answer;
  noted.message = "row 3 wrong";
  settle_verdict(noted);
  EXPECT_EQ(noted.verdict, Verdict::wrong_answer);
  EXPECT_EQ(noted.message, "row 3 wrong");
  ASSERT_EQ(noted.other_failures.size(), 1u);
  EXPECT_EQ(noted.other_failures[0].verdict, Verdict::understated_memory);

  CaseResult only_claim;
  only_claim.other_failures = {{Verdict::understated_memory, "claimed 16 KiB, held 128 MiB"}};
  settle_verdict(only_claim);
  EXPECT_EQ(only_claim.verdict, Verdict::understated_memory);
  EXPECT_TRUE(only_claim.other_failures.empty());

  CaseResult crashed;
  crashed.other_failures = {{Verdict::understated_memory, "m"}, {Verdict::wrong_answer, "w"}};
  crashed.verdict = Verdict::crash;
  settle_verdict(crashed);
  EXPECT_EQ(crashed.verdict, Verdict::crash);
  ASSERT_EQ(crashed.other_failures.size(), 2u);
  EXPECT_EQ(crashed.other_failures[0].verdict, Verdict::wrong_answer);
  EXPECT_EQ(crashed.other_failures[1].verdict, Verdict::understated_memory);

  CaseResult clean;
  settle_verdict(clean);
  EXPECT_EQ(clean.verdict, Verdict::pass);
}

}  // namespace
}  // namespace harness
