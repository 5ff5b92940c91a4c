// A tolerance is justified by three measured facts; each test breaks one.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/core/error.h"
#include "harness/core/error_metrics.h"
#include "harness/runner/tolerance_justification.h"

namespace harness {
namespace {

const char* const kMetric = "y_tolerance_used";

EntryResult entry(const std::string& name, const std::vector<std::pair<Suite, double>>& used) {
  EntryResult e;
  e.challenge = "layernorm_backward";
  e.submission.name = name;
  e.device = "cpu";
  for (size_t i = 0; i < used.size(); ++i) {
    CaseResult c;
    c.id = std::string(suite_name(used[i].first)) + ".case" + std::to_string(i);
    c.suite = used[i].first;
    c.metrics[kMetric] = used[i].second;
    e.cases.push_back(c);
  }
  return e;
}

nlohmann::json tolerance(size_t mutant_cases = 2) {
  return {{"rtol", 1e-5},
          {"justified_by",
           {{"metric", kMetric},
            {"references", {"ours"}},
            {"sound", {"plain"}},
            {"mutants", {{{"name", "bug"}, {"cases", mutant_cases}}}}}}};
}

RunResults run(double ours, double plain, double bug_first, double bug_second) {
  RunResults r;
  r.entries.push_back(entry("ours", {{Suite::correctness, 0.01}, {Suite::stability, ours}}));
  r.entries.push_back(entry("plain", {{Suite::correctness, 0.2}, {Suite::edge, plain}}));
  r.entries.push_back(
      entry("bug", {{Suite::correctness, bug_first}, {Suite::correctness, bug_second}, {Suite::edge, 50}}));
  return r;
}

TEST(ToleranceJustification, ThreeFactsMeasuredJustifyIt) {
  const auto j = justify_tolerance(run(0.05, 0.4, 3, 12), "layernorm_backward", "y", tolerance());
  ASSERT_EQ(j.facts.size(), 3u);
  EXPECT_TRUE(j.shown());
  EXPECT_FALSE(j.failed());
  EXPECT_EQ(j.bound, "rtol 1e-05");
  EXPECT_NE(j.facts[0].observed.find("0.05 of it (worst: stability.case1)"), std::string::npos) << j.facts[0].observed;
  EXPECT_NE(j.facts[2].observed.find("on 2 of 2 correctness cases (needs 2), 3x to 12x"), std::string::npos)
      << j.facts[2].observed;
}

TEST(ToleranceJustification, SoundCodeBeyondItIsAFactAgainstIt) {
  const auto j = justify_tolerance(run(0.05, 1.3, 3, 12), "layernorm_backward", "y", tolerance());
  EXPECT_TRUE(j.failed());
  EXPECT_FALSE(j.facts[1].ok);
  EXPECT_NE(j.facts[1].observed.find("FAILS"), std::string::npos);
}

TEST(ToleranceJustification, OurReferenceBeyondItIsAFactAgainstIt) {
  EXPECT_TRUE(justify_tolerance(run(1.01, 0.4, 3, 12), "layernorm_backward", "y", tolerance()).failed());
}

// Beyond on its edge case alone: the mutant's core cases are what count.
TEST(ToleranceJustification, AMutantWithinItOnTooManyCoreCasesIsAFactAgainstIt) {
  const auto j = justify_tolerance(run(0.05, 0.4, 0.9, 12), "layernorm_backward", "y", tolerance());
  EXPECT_TRUE(j.failed());
  EXPECT_NE(j.facts[2].observed.find("1 of 2 correctness cases (needs 2)"), std::string::npos) << j.facts[2].observed;
  EXPECT_FALSE(justify_tolerance(run(0.05, 0.4, 0.9, 12), "layernorm_backward", "y", tolerance(1)).failed());
}

TEST(ToleranceJustification, AToleranceNamingNoJustificationIsUnjustified) {
  const auto j = justify_tolerance(run(0.05, 0.4, 3, 12), "layernorm_backward", "y", {{"rtol", 1e-5}});
  EXPECT_FALSE(j.declared);
  EXPECT_TRUE(j.failed());
}

// A selection without the sound control (--device cuda, say) cannot show
// the fact, which is not the same as a fact against the tolerance.
TEST(ToleranceJustification, AFactNotInTheRunIsMissingNotFailed) {
  RunResults r = run(0.05, 0.4, 3, 12);
  r.entries.erase(r.entries.begin() + 1);
  const auto j = justify_tolerance(r, "layernorm_backward", "y", tolerance());
  EXPECT_FALSE(j.failed());
  EXPECT_FALSE(j.shown());
  EXPECT_EQ(j.missing, std::vector<std::string>{"sound"});
}

// A second sound control this machine cannot run (PyTorch's, without a
// python3 that imports torch): unavailable on every case, it is no fact,
// neither for the tolerance nor against it. Had it run, it would be one.
TEST(ToleranceJustification, AControlUnavailableOnEveryCaseIsNoFact) {
  nlohmann::json t = tolerance();
  t["justified_by"]["sound"].push_back("torch");
  RunResults r = run(0.05, 0.4, 3, 12);
  EntryResult torch = entry("torch", {{Suite::correctness, 0}, {Suite::edge, 0}});
  for (CaseResult& c : torch.cases) {
    c.verdict = Verdict::unavailable;
    c.metrics = nlohmann::json::object();
  }
  r.entries.push_back(torch);
  const auto without = justify_tolerance(r, "layernorm_backward", "y", t);
  EXPECT_EQ(without.facts.size(), 3u);
  EXPECT_FALSE(without.failed());
  EXPECT_TRUE(without.shown());
  // One case that ran makes it a fact: here one measured on no case.
  r.entries.back().cases[0].verdict = Verdict::pass;
  const auto with = justify_tolerance(r, "layernorm_backward", "y", t);
  ASSERT_EQ(with.facts.size(), 4u);
  EXPECT_TRUE(with.failed());
  EXPECT_EQ(with.facts[2].submission, "torch");
}

TEST(ToleranceJustification, AMalformedDeclarationNamesItsFile) {
  nlohmann::json t = tolerance();
  t["justified_by"]["mutants"][0]["suite"] = "speed";
  try {
    justify_tolerance(run(0.05, 0.4, 3, 12), "layernorm_backward", "y", t);
    FAIL() << "no error";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("challenges/layernorm_backward/challenge.json, tolerance 'y'"),
              std::string::npos)
        << e.what();
  }
}

// The metric every justification reads: the worst error over its own bound.
TEST(ToleranceJustification, ToleranceUsedIsTheWorstErrorOverItsBound) {
  const double reference[] = {1.0, 2.0, 0.0};
  const float got[] = {1.0f + 1e-3f, 2.0f, 5e-4f};
  const Tolerance t{1e-3, 1e-3, 0};  // bound: 1e-3 * 2 + 1e-3 * |ref|
  const Comparison c = compare_to_reference(got, reference, 3, t);
  const double worst = (static_cast<double>(got[0]) - 1.0) / 3e-3;  // element 2: 5e-4 of 2e-3
  EXPECT_NEAR(c.tolerance_used, worst, 1e-12);
  EXPECT_NEAR(worst, 1.0 / 3.0, 1e-4);
  nlohmann::json metrics;
  c.add_metrics(metrics, "y");
  EXPECT_DOUBLE_EQ(metrics["y_tolerance_used"].get<double>(), c.tolerance_used);
  const float nan_got[] = {NAN, 2.0f, 0.0f};
  compare_to_reference(nan_got, reference, 3, t).add_metrics(metrics, "y");
  EXPECT_GT(metrics["y_tolerance_used"].get<double>(), 1e299);
}

}  // namespace
}  // namespace harness
