// Process submissions: the NumPy examples pass; every way of breaking the
// protocol gets a clear verdict for that case, never a crash of the harness
// or a silent pass; a missing Python makes them unavailable, not fatal.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "harness/challenge_api/challenge.h"
#include "harness/results/results_json.h"
#include "support/test_support.h"

namespace harness {
namespace {

bool have_numpy() { return testing::run_shell("/usr/bin/python3 -c 'import numpy'").exit_code == 0; }

#define REQUIRE_NUMPY() \
  if (!have_numpy()) GTEST_SKIP() << "python3-numpy is not installed (scripts/install-deps.sh installs it)"

const std::string kProtocolCase = "correctness.normal.r64.v1024.k10";

CaseResult run_mode(const std::string& mode, double timeout_s = 20) {
  ::setenv("HARNESS_FIXTURE_MODE", mode.c_str(), 1);
  RunSettings settings;
  settings.call_timeout_s = timeout_s;
  const RunResults r =
      testing::run_softmax_cases("fixture-process-misbehaving", {kProtocolCase, "correctness.normal.r64.v1024.k2"},
                                 testing::fixture_catalog(), settings);
  ::unsetenv("HARNESS_FIXTURE_MODE");
  return testing::case_of(testing::entry_of(r, "fixture-process-misbehaving"), kProtocolCase);
}

// A process is kept across cases until one does not pass; the next case
// then starts a fresh one (Executor::end_case). The fixture says on stderr
// when it starts, and each case keeps what was printed during it.
TEST(ProcessProtocol, ACaseThatFailsEndsTheProcessAndTheNextCaseStartsAFreshOne) {
  REQUIRE_NUMPY();
  const std::vector<std::string> cases = {"correctness.normal.r64.v1024.k2", "correctness.normal.r64.v1024.k5",
                                          "correctness.normal.r64.v1024.k10"};
  ::setenv("HARNESS_FIXTURE_MODE", "error-when-k5", 1);
  const RunResults r = testing::run_softmax_cases("fixture-process-misbehaving", cases, testing::fixture_catalog());
  ::unsetenv("HARNESS_FIXTURE_MODE");
  const EntryResult& entry = testing::entry_of(r, "fixture-process-misbehaving");
  auto started_during = [&](const std::string& id) {
    return testing::case_of(entry, id).worker_output.find("fixture process") != std::string::npos;
  };
  EXPECT_EQ(testing::case_of(entry, cases[0]).verdict, Verdict::pass);
  EXPECT_TRUE(started_during(cases[0]));
  const CaseResult& failed = testing::case_of(entry, cases[1]);
  EXPECT_EQ(failed.verdict, Verdict::error);
  EXPECT_NE(failed.message.find("k=5 left me in a bad state"), std::string::npos) << failed.message;
  EXPECT_FALSE(started_during(cases[1])) << "a passing case ended the process";
  EXPECT_EQ(testing::case_of(entry, cases[2]).verdict, Verdict::pass);
  EXPECT_TRUE(started_during(cases[2])) << "the case after a failure ran in the process the failure left";
}

// OpenBLAS runs on one thread in every process submission, whichever build
// the machine's libblas is (a threaded one's per-thread buffers read as a
// NumPy kv_cache's state), unless the harness's own environment chooses.
TEST(ProcessProtocol, OpenBlasRunsOnOneThreadUnlessTheHarnesssEnvironmentChooses) {
  REQUIRE_NUMPY();
  ::unsetenv("OPENBLAS_NUM_THREADS");
  const CaseResult fixed = run_mode("report-blas-threads");
  EXPECT_NE(fixed.message.find("OPENBLAS_NUM_THREADS=1"), std::string::npos) << fixed.message;
  testing::ScopedEnv chosen("OPENBLAS_NUM_THREADS", "2");
  const CaseResult kept = run_mode("report-blas-threads");
  EXPECT_NE(kept.message.find("OPENBLAS_NUM_THREADS=2"), std::string::npos) << kept.message;
}

TEST(ProcessProtocol, AWellBehavedClientPasses) {
  REQUIRE_NUMPY();
  const CaseResult c = run_mode("ok");
  EXPECT_EQ(c.verdict, Verdict::pass) << c.message;
}

TEST(ProcessProtocol, EachBreakOfTheProtocolGetsItsVerdict) {
  REQUIRE_NUMPY();
  struct Expected {
    std::string mode;
    Verdict verdict;
    std::string message;
  };
  const std::vector<Expected> expected = {
      {"garbage-before-hello", Verdict::error, "not the protocol on its standard output"},
      {"refuse", Verdict::error, "refused to start: this client needs protocol 2"},
      {"bad-hello", Verdict::error, "answered the hello with"},
      {"no-ops", Verdict::unsupported, "does not implement op softmax_topk"},
      {"garbage-line", Verdict::error, "'Computing softmax...'"},
      {"json-array", Verdict::error, "not a protocol message: '[1, 2, 3]'"},
      {"wrong-id", Verdict::error, "replied to request"},
      {"bad-status", Verdict::error, "status \"fine\" is not ok, unsupported, out_of_memory or error"},
      {"error-status", Verdict::error, "out of patience"},
      // The exception line leads (the console and the report cell show the
      // start of a message), not "Traceback (most recent call last):".
      {"python-exception", Verdict::error, "ValueError: k=10 is more than this adapter handles (at File \""},
      {"unsupported-status", Verdict::unsupported, "k too large for me"},
      {"missing-output", Verdict::error, "did not write output probs"},
      {"wrong-dtype", Verdict::error, "output probs is float64[64, 10], expected float32[64, 10]"},
      {"not-npy", Verdict::error, "not a usable .npy file"},
      {"exit", Verdict::crash, "exited with code 3"},
      {"hang", Verdict::timeout, "gave no answer within 2 s"},
  };
  for (const auto& e : expected) {
    const CaseResult c = run_mode(e.mode, 2);
    EXPECT_EQ(c.verdict, e.verdict) << e.mode << ": " << verdict_name(c.verdict) << " " << c.message;
    EXPECT_NE(c.message.find(e.message), std::string::npos) << e.mode << ": " << c.message;
    if (e.mode == "python-exception") {
      EXPECT_LT(c.message.find(e.message), c.message.find("Traceback")) << c.message;
    }
  }
}

// A process that looks at its scratch folder during each timed call and
// fails the call when another set's input file there is new since that
// set's own last call: inputs it could have started on ahead of their call,
// in time no call's timing shows. They are written aside and moved in as
// their call goes out, so it finds none. (Written straight into the folder
// at the start of each round, as they were, it found the round's other set
// at its first call: "saw inputs before their call: timed1-logits.npy".)
// A short perf case of the misbehaving fixture in `mode`: a few rounds of
// its two input sets.
CaseResult misbehaving_perf_case(const std::string& mode) {
  const std::string perf = "perf.normal.r64.v262144.k32";
  ::setenv("HARNESS_FIXTURE_MODE", mode.c_str(), 1);
  RunSettings settings;
  settings.timing.warmup_ms = 0;
  settings.timing.max_ms = 200;
  settings.timing.max_samples = 6;
  const RunResults r =
      testing::run_softmax_cases("fixture-process-misbehaving", {perf}, testing::fixture_catalog(), settings);
  ::unsetenv("HARNESS_FIXTURE_MODE");
  return testing::case_of(testing::entry_of(r, "fixture-process-misbehaving"), perf);
}

// The hello carries the challenge's declared ops: the Python client refuses
// functions that cannot take their op's declared inputs, or that serve an
// op the challenge does not declare, naming both, before any call.
TEST(ProcessProtocol, FunctionsThatDisagreeWithTheDeclaredOpsAreRefusedAtTheHello) {
  REQUIRE_NUMPY();
  const RunResults r =
      testing::run_softmax_cases("fixture-process-wrong-signature", {kProtocolCase}, testing::fixture_catalog());
  const CaseResult c = testing::case_of(testing::entry_of(r, "fixture-process-wrong-signature"), kProtocolCase);
  EXPECT_EQ(c.verdict, Verdict::error);
  EXPECT_NE(c.message.find("op 'softmax_topk' is called as softmax_topk(scalars, logits), which the function "
                           "softmax_topk(scalars, x) cannot take"),
            std::string::npos)
      << c.message;
  EXPECT_NE(c.message.find("'softmax' is not an op of this challenge (its ops: softmax_topk)"), std::string::npos)
      << c.message;
}

TEST(ProcessProtocol, ATimedSetsInputsAppearOnlyAsItsCallGoesOut) {
  REQUIRE_NUMPY();
  const CaseResult c = misbehaving_perf_case("look-ahead");
  EXPECT_EQ(c.verdict, Verdict::pass) << c.message;
  ASSERT_TRUE(c.timing.has_value());
  EXPECT_GE(c.timing->samples_ns.size(), 4u);  // at least two rounds of the two sets
}

// A reply claims the call's outputs are written. The process replies to
// each round's first set before it writes that set's outputs, which then
// appear while the round's next call is timed (process-exploit-reply-before-work).
// Read when the round ended, they were all there: pass, the first call of
// every round nearly free.
TEST(ProcessProtocol, ATimedCallsOutputsAreReadAsItReplies) {
  REQUIRE_NUMPY();
  const CaseResult c = misbehaving_perf_case("reply-then-write");
  EXPECT_EQ(c.verdict, Verdict::error) << c.message;
  EXPECT_NE(c.message.find("timed repetitions"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("probs"), std::string::npos) << c.message;
}

TEST(ProcessProtocol, TheNumpyExamplesPassEveryCorrectnessCase) {
  REQUIRE_NUMPY();
  RunSelection selection;
  selection.submissions = {"numpy"};
  selection.suites = {Suite::correctness};
  const RunResults r = testing::run_selection(selection, testing::project_catalog());
  ASSERT_EQ(r.entries.size(), all_challenges().size()) << "a NumPy example per challenge";
  for (const auto& e : r.entries) {
    EXPECT_EQ(e.submission.kind, "process");
    ASSERT_FALSE(e.cases.empty()) << e.challenge;
    for (const auto& c : e.cases)
      EXPECT_EQ(c.verdict, Verdict::pass) << e.challenge << " " << c.id << ": " << c.message;
  }
}

TEST(ProcessProtocol, WithoutPythonProcessSubmissionsAreUnavailableAndTheRunGoesOn) {
  testing::TempFolder tmp;
  const auto r = testing::run_cli(
      "run softmax_topk -s numpy,cpu-fast --device cpu -q --case " + kProtocolCase + " -o " + tmp.path("r.json"),
      "HARNESS_PYTHON=/nonexistent/python3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const RunResults results = load_results(tmp.path("r.json"));
  const CaseResult& unavailable = testing::case_of(testing::entry_of(results, "numpy"), kProtocolCase);
  EXPECT_EQ(unavailable.verdict, Verdict::unavailable);
  EXPECT_NE(unavailable.message.find("HARNESS_PYTHON=/nonexistent/python3 is not an executable"), std::string::npos);
  EXPECT_EQ(testing::case_of(testing::entry_of(results, "cpu-fast"), kProtocolCase).verdict, Verdict::pass);
  const auto listed = testing::run_cli("list softmax_topk", "HARNESS_PYTHON=/nonexistent/python3");
  EXPECT_NE(listed.output.find("unavailable  HARNESS_PYTHON=/nonexistent/python3 is not an executable"),
            std::string::npos)
      << listed.output;
}

}  // namespace
}  // namespace harness
