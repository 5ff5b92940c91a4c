// docs/PROCESS_PROTOCOL.md says it is complete enough to write a client in
// any language. tests/fixtures/softmax_topk/process-perl is one, in Perl with
// core modules only, written from that page and the challenge's README
// alone (protocol 1: .npy files in the scratch folder): the harness runs it,
// sandboxed, on every correctness, edge and stability case of softmax_topk,
// and it passes them all.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "harness/challenge_api/challenge.h"
#include "support/test_support.h"

namespace harness {
namespace {

const std::string kPerlClient = "fixture-process-perl";

TEST(ProcessClientInAnotherLanguage, APerlClientWrittenFromTheProtocolDocPassesEveryCorrectnessEdgeAndStabilityCase) {
  if (testing::run_shell("command -v perl >/dev/null 2>&1").exit_code != 0)
    GTEST_SKIP() << "perl is not installed (scripts/install-deps.sh installs Debian's perl)";
  if (testing::run_shell("perl -MJSON::PP -e 1 >/dev/null 2>&1").exit_code != 0)
    GTEST_SKIP() << "perl has no JSON::PP module (Debian's perl package has it, perl-base alone does not; "
                    "scripts/install-deps.sh installs it)";

  const std::vector<Suite> suites = {Suite::correctness, Suite::edge, Suite::stability};
  RunSelection selection;
  selection.challenges = {"softmax_topk"};
  selection.submissions = {kPerlClient};
  selection.suites = suites;
  const RunResults r = testing::run_selection(selection, testing::fixture_catalog());
  const EntryResult& entry = testing::entry_of(r, kPerlClient);
  EXPECT_EQ(entry.submission.kind, "process");

  // Every case of those suites ran, and passed.
  std::set<std::string> expected;
  for (const auto& spec : find_challenge("softmax_topk").cases())
    if (std::find(suites.begin(), suites.end(), spec.suite) != suites.end()) expected.insert(spec.id);
  std::set<std::string> ran;
  for (const auto& c : entry.cases) ran.insert(c.id);
  EXPECT_EQ(ran, expected);
  ASSERT_FALSE(entry.cases.empty());
  for (const auto& c : entry.cases) {
    EXPECT_EQ(std::string(verdict_name(c.verdict)), "pass")
        << c.id << ": " << c.message << "\nthe client's standard error:\n"
        << c.worker_output;
  }
}

}  // namespace
}  // namespace harness
