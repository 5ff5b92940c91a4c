#include "support/emulated_cuda.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "harness/definitions/verdict.h"
#include "support/test_support.h"

namespace harness::testing {

namespace {

const Catalog& emulated_catalog() {
  static const Catalog catalog = Catalog::load(HARNESS_EMULATED_INDEX);
  return catalog;
}

std::string verdict_counts(const EntryResult& e) {
  std::map<std::string, int> counts;
  for (const CaseResult& c : e.cases) ++counts[fmt::format("{} {}", suite_name(c.suite), verdict_name(c.verdict))];
  std::string out;
  for (const auto& [what, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, what);
  return out;
}

void expect_declared_verdict(const EntryResult& e) {
  const Expectation& x = *e.submission.expect;
  int in_suite = 0, matching = 0;
  for (const CaseResult& c : e.cases) {
    if (c.suite != x.suite) continue;
    ++in_suite;
    matching += c.verdict == x.verdict;
  }
  ASSERT_GT(in_suite, 0) << e.submission.name << ": the selection has no case of its declared suite "
                         << suite_name(x.suite);
  if (x.every_case) {
    EXPECT_EQ(matching, in_suite) << e.submission.name << ": " << verdict_counts(e);
  } else {
    EXPECT_GT(matching, 0) << e.submission.name << " declares " << verdict_name(x.verdict) << " in "
                           << suite_name(x.suite) << ": " << verdict_counts(e);
  }
}

}  // namespace

RunSelection quick_untimed_selection() {
  RunSelection selection;
  selection.quick = true;
  selection.suites = {Suite::correctness, Suite::edge, Suite::stability};
  return selection;
}

void expect_emulated_cuda_verdicts(const std::string& challenge, RunSelection selection,
                                   const std::vector<std::string>& also) {
  selection.challenges = {challenge};
  selection.device = "cpu";
  if (!also.empty()) {
    // Explicit case ids replace --quick's choice: the ids the plan picks, and `also`.
    const RunPlan plan = make_plan(selection, emulated_catalog(), cpu_devices());
    std::vector<std::string> ids = also;
    for (const CaseSpec& c : plan.entries.at(0).cases) ids.push_back(c.id);
    selection.case_ids = ids;
  }
  selection.with_mutants = true;
  selection.submissions.clear();
  std::set<std::string> expected;
  for (const SubmissionRecord& record : emulated_catalog().records()) {
    if (record.challenge == challenge) expected.insert(record.name);
  }
  ASSERT_TRUE(expected.count("emulated-cuda-fast"))
      << HARNESS_EMULATED_INDEX << " has no emulated cuda-fast of " << challenge;
  selection.submissions.assign(expected.begin(), expected.end());
  RunSettings settings;
  settings.call_timeout_s = 120;
  const RunResults results = run_selection(selection, emulated_catalog(), settings);

  std::set<std::string> judged;
  for (const EntryResult& e : results.entries) {
    if (e.submission.role == "control") continue;  // the built-in negative controls, not emulated
    judged.insert(e.submission.name);
    ASSERT_FALSE(e.cases.empty()) << e.submission.name;
    if (e.submission.role == "mutant") {
      ASSERT_TRUE(e.submission.expect) << e.submission.name << " declares no verdict";
      expect_declared_verdict(e);
      continue;
    }
    for (const CaseResult& c : e.cases) {
      EXPECT_EQ(c.verdict, Verdict::pass) << e.submission.name << " " << c.id << ": " << c.message;
    }
  }
  EXPECT_EQ(judged, expected);
}

}  // namespace harness::testing
