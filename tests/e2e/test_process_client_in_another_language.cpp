// docs/PROCESS_PROTOCOL.md says it is complete enough to write a client in
// any language. tests/fixtures/softmax_topk/process-perl is one, in Perl with
// core modules only, written from that page and the challenge's README
// alone, speaking both protocol versions: the harness runs it, sandboxed, as
// fixture-process-perl (protocol 1: .npy files in the scratch folder) on
// every correctness, edge and stability case of softmax_topk, and as
// fixture-process-perl-v2 (protocol 2: the harness's memory, handed over on
// the memory socket) on every correctness and stability case and the edge
// cases at the extremes, and it passes them all.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "harness/challenge_api/challenge.h"
#include "harness/submissions/manifest.h"
#include "support/test_support.h"

namespace harness {
namespace {

const std::string kPerlClient = "fixture-process-perl";
const std::string kPerlClientV2 = "fixture-process-perl-v2";

// Why this machine's perl cannot run the client; empty when it can.
std::string why_perl_cannot_run_the_client() {
  if (testing::run_shell("command -v perl >/dev/null 2>&1").exit_code != 0)
    return "perl is not installed (scripts/install-deps.sh installs Debian's perl)";
  if (testing::run_shell("perl -MJSON::PP -e 1 >/dev/null 2>&1").exit_code != 0)
    return "perl has no JSON::PP module (Debian's perl package has it, perl-base alone does not; "
           "scripts/install-deps.sh installs it)";
  return "";
}

// The ids of softmax_topk's cases of `suites`, plus `also`.
std::set<std::string> case_ids(const std::vector<Suite>& suites, const std::vector<std::string>& also = {}) {
  std::set<std::string> ids(also.begin(), also.end());
  for (const auto& spec : find_challenge("softmax_topk").cases())
    if (std::find(suites.begin(), suites.end(), spec.suite) != suites.end()) ids.insert(spec.id);
  return ids;
}

// Runs `submission`, a process of `protocol`, on the cases `expected` of
// softmax_topk: each of them runs, and passes.
void expect_every_case_passes(const std::string& submission, int protocol, const std::set<std::string>& expected) {
  RunSelection selection;
  selection.challenges = {"softmax_topk"};
  selection.submissions = {submission};
  selection.case_ids.assign(expected.begin(), expected.end());
  const RunResults r = testing::run_selection(selection, testing::fixture_catalog());
  const EntryResult& entry = testing::entry_of(r, submission);
  EXPECT_EQ(entry.submission.kind, "process");
  EXPECT_EQ(load_manifest(entry.submission.manifest_path).protocol, protocol);

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

TEST(ProcessClientInAnotherLanguage, APerlClientWrittenFromTheProtocolDocPassesEveryCorrectnessEdgeAndStabilityCase) {
  if (const std::string why = why_perl_cannot_run_the_client(); !why.empty()) GTEST_SKIP() << why;
  expect_every_case_passes(kPerlClient, 1, case_ids({Suite::correctness, Suite::edge, Suite::stability}));
}

// Protocol 2: the same client reads the memory socket (recvmsg by
// syscall, the descriptors by SCM_RIGHTS), reads and writes the memory
// files at each tensor's offset, and answers unmap. Every correctness and
// stability case, and of the edge cases those at the extremes: one column,
// k = vocab, more rows than 65536, ties, a masked row, a shape drawn from
// the seed.
TEST(ProcessClientInAnotherLanguage, APerlClientWrittenFromTheProtocolDocPassesOnProtocol2) {
  if (const std::string why = why_perl_cannot_run_the_client(); !why.empty()) GTEST_SKIP() << why;
  expect_every_case_passes(
      kPerlClientV2, 2,
      case_ids({Suite::correctness, Suite::stability},
               {"edge.normal.r1.v1.k1", "edge.normal.r2.v256.k256", "edge.normal.r65537.v32.k2",
                "edge.ties.r32.v1000.k10", "edge.masked99.r8.v1000.k32", "edge.drawn.vocab_edges"}));
}

}  // namespace
}  // namespace harness
