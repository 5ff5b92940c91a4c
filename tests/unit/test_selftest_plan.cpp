// What a selftest runs: a mutant or negative control only the suite its
// verdict is declared in and the correctness suite (where the tolerances
// are justified); everything else the whole selection.
#include <gtest/gtest.h>

#include <set>

#include "harness/runner/run_plan.h"
#include "harness/runner/tolerance_justification.h"
#include "support/test_support.h"

namespace harness {
namespace {

std::set<Suite> suites_of(const RunPlan& plan, const std::string& submission) {
  std::set<Suite> suites;
  bool found = false;
  for (const auto& e : plan.entries) {
    if (e.submission.name != submission) continue;
    found = true;
    for (const auto& c : e.cases) suites.insert(c.suite);
  }
  EXPECT_TRUE(found) << submission << " is not in the plan";
  return suites;
}

// kv_cache's plan on the CPU over the selftest's suites, as `harness
// selftest` makes it or as `run --with-mutants` does.
RunPlan kv_plan(bool selftest) {
  RunSelection selection;
  selection.challenges = {"kv_cache"};
  selection.device = "cpu";
  selection.only_mutants = selftest;
  selection.with_mutants = !selftest;
  selection.suites = {Suite::correctness, Suite::edge, Suite::stability};
  return make_plan(selection, testing::project_catalog(), testing::cpu_devices());
}

TEST(SelftestPlan, MutantsAndControlsRunTheirDeclaredSuiteAndTheCoreCasesOthersEverything) {
  const RunPlan plan = kv_plan(true);
  const std::set<Suite> all{Suite::correctness, Suite::edge, Suite::stability};
  EXPECT_EQ(suites_of(plan, "cpu-mutant-no-max-subtraction"), (std::set<Suite>{Suite::correctness, Suite::stability}));
  EXPECT_EQ(suites_of(plan, "cpu-mutant-leak-on-release"), (std::set<Suite>{Suite::correctness, Suite::edge}));
  EXPECT_EQ(suites_of(plan, "cpu-mutant-no-scaling"), std::set<Suite>{Suite::correctness});
  EXPECT_EQ(suites_of(plan, "control-zeros"), std::set<Suite>{Suite::correctness});
  EXPECT_EQ(suites_of(plan, "cpu-fast"), all);
  EXPECT_EQ(suites_of(plan, "cpu-naive"), all);
  EXPECT_EQ(suites_of(plan, "float32-numpy"), all);
  // An exploit aimed at named cases keeps exactly those.
  EXPECT_EQ(suites_of(plan, "cpu-hidden-leak"), std::set<Suite>{Suite::edge});
}

TEST(SelftestPlan, ARunWithMutantsStillRunsThemOnEverySelectedSuite) {
  const RunPlan plan = kv_plan(false);
  EXPECT_EQ(suites_of(plan, "cpu-mutant-no-scaling"),
            (std::set<Suite>{Suite::correctness, Suite::edge, Suite::stability}));
}

// A mutant that justifies a tolerance on a suite of its own (challenge.json,
// "justified_by") runs that suite in a selftest as well.
TEST(SelftestPlan, TheSuitesATolerancesMutantsMustFailOnAreKnown) {
  EXPECT_EQ(justification_suites("layernorm_backward", "cpu-mutant-dgamma-partial-block-dropped"),
            std::set<Suite>{Suite::edge});
  EXPECT_EQ(justification_suites("layernorm_backward", "cpu-mutant-naive-variance"), std::set<Suite>{Suite::stability});
  EXPECT_EQ(justification_suites("layernorm_backward", "cpu-mutant-sample-variance"),
            std::set<Suite>{Suite::correctness});
  EXPECT_TRUE(justification_suites("layernorm_backward", "cpu-mutant-no-eps").empty());
}

}  // namespace
}  // namespace harness
