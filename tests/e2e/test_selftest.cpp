// The mutant catalogue is the test of the checker: `harness selftest` must
// give every mutant and control its declared verdict, and the tolerance must
// be justified by a reference that passes it and a mutant that fails it.
#include <gtest/gtest.h>

#include "harness/results/results_json.h"
#include "harness/runner/selftest.h"
#include "support/test_support.h"

namespace harness {
namespace {

class Selftest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = new testing::TempFolder();
    const std::string out = folder_->path("selftest.json");
    // --timeout 3: the hang mutant costs two timeouts; nothing else comes near.
    command_ = new testing::CommandResult(testing::run_cli("selftest softmax_topk --device cpu --timeout 3 --seed 11 -o " + out));
    results_ = new RunResults(load_results(out));
  }
  static void TearDownTestSuite() {
    delete results_;
    delete command_;
    delete folder_;
  }
  static testing::TempFolder* folder_;
  static testing::CommandResult* command_;
  static RunResults* results_;
};

testing::TempFolder* Selftest::folder_ = nullptr;
testing::CommandResult* Selftest::command_ = nullptr;
RunResults* Selftest::results_ = nullptr;

TEST_F(Selftest, EveryMutantAndControlGetsItsDeclaredVerdict) {
  EXPECT_EQ(command_->exit_code, 0) << command_->output;
  size_t mutants = 0, controls = 0;
  for (const auto& f : evaluate_selftest(*results_)) {
    EXPECT_TRUE(f.ok) << f.submission << ": must get " << f.expected << ", got " << f.observed;
    mutants += f.role == "mutant";
    controls += f.role == "control";
  }
  EXPECT_GE(mutants, 10u) << "the catalogue needs at least ten mutants";
  EXPECT_EQ(controls, 4u);
}

TEST_F(Selftest, ABuildFailureIsAVerdictWithTheCompilersFirstErrors) {
  const EntryResult& e = testing::entry_of(*results_, "cpu-mutant-does-not-compile");
  EXPECT_EQ(e.build.status, "failed");
  EXPECT_NE(e.build.log_excerpt.find("error"), std::string::npos) << e.build.log_excerpt;
  for (const auto& c : e.cases) EXPECT_EQ(c.verdict, Verdict::build_failed);
}

TEST_F(Selftest, ProbabilityToleranceIsJustifiedByAReferenceThatPassesAndAMutantThatFails) {
  const double rtol = 1e-4;  // challenges/softmax_topk/challenge.json
  for (const char* ours : {"cpu-fast", "cpu-naive"}) {
    double worst = 0;
    for (const auto& c : testing::entry_of(*results_, ours).cases) {
      EXPECT_EQ(c.verdict, Verdict::pass) << ours << " " << c.id << ": " << c.message;
      if (c.metrics.contains("probs_max_rel_error")) worst = std::max(worst, c.metrics["probs_max_rel_error"].get<double>());
    }
    EXPECT_LT(worst, rtol) << ours;
    RecordProperty(std::string(ours) + "_worst_rel_error", std::to_string(worst));
  }
  size_t caught = 0;
  for (const auto& c : testing::entry_of(*results_, "cpu-mutant-bf16-exp").cases) {
    if (c.suite != Suite::correctness) continue;
    EXPECT_EQ(c.verdict, Verdict::wrong_answer) << c.id;
    EXPECT_GT(c.metrics.value("probs_max_rel_error", 0.0), rtol) << c.id;
    caught += c.verdict == Verdict::wrong_answer;
  }
  EXPECT_GT(caught, 0u);
}

}  // namespace
}  // namespace harness
