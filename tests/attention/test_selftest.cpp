// attention's mutant catalogue is the test of its checks: `harness selftest
// attention` gives every mutant and control its declared verdict, and each
// tolerance is justified by our kernels and the float32 control passing it
// and a realistic mutant failing it.
#include <gtest/gtest.h>

#include "harness/results/results_json.h"
#include "harness/runner/selftest.h"
#include "harness/runner/tolerance_justification.h"
#include "support/test_support.h"

namespace harness {
namespace {

TEST(Selftest, AttentionMutantsGetTheirVerdictsAndEachToleranceIsJustified) {
  testing::TempFolder folder;
  const std::string out = folder.path("selftest.json");
  const auto command = testing::run_cli("selftest attention --device cpu --timeout 10 --seed 14 -o " + out);
  EXPECT_EQ(command.exit_code, 0) << command.output;
  const RunResults results = load_results(out);
  size_t mutants = 0;
  for (const auto& f : evaluate_selftest(results)) {
    EXPECT_TRUE(f.ok) << f.submission << ": must get " << f.expected << ", got " << f.observed;
    mutants += f.role == "mutant";
  }
  EXPECT_EQ(mutants, 8u);  // README.md, Mutants
  // PyTorch's own ops judged where a python3 imports torch; elsewhere no
  // fact of any tolerance, and the selftest says why it was not judged.
  const EntryResult& torch = testing::entry_of(results, "float32-pytorch");
  for (const auto& f : evaluate_selftest(results)) {
    if (f.submission != "float32-pytorch") continue;
    if (torch.build.status == "unavailable") {
      EXPECT_NE(f.observed.find("(not judged: " + torch.build.reason + ")"), std::string::npos) << f.observed;
    } else {
      EXPECT_EQ(f.observed.find("not judged"), std::string::npos) << f.observed;
    }
  }
  const auto justifications = justify_tolerances(results);
  EXPECT_EQ(justifications.size(), 5u);  // o, lse, dq, dk, dv
  for (const auto& j : justifications) {
    EXPECT_TRUE(j.shown()) << j.tolerance << (j.declared ? "" : ": undeclared");
    for (const auto& f : j.facts)
      EXPECT_TRUE(f.ok) << j.tolerance << ": " << f.kind << " " << f.submission << " " << f.observed;
    for (const auto& kind : j.missing) ADD_FAILURE() << j.tolerance << ": no " << kind << " in the run";
  }
}

}  // namespace
}  // namespace harness
