// attention's memory dimension: a kernel that holds a score matrix per head
// is seen above what tiles need, by the peak memory witness, and scores
// less; a tiled one stays within it.
#include <gtest/gtest.h>

#include "attention/host/attn_case.h"
#include "attention/host/memory_score.h"
#include "harness/results/results_json.h"
#include "harness/witness/memory_witness.h"
#include "support/test_support.h"

namespace harness {
namespace {

// The witness sees cpu-naive's score matrix, freed before each call
// returns, and cpu-fast within what tiles need. (Whether 4 MiB is beyond the
// allowance depends on the machine's threads; the score of a peak is
// judged below, on figures fixed here.)
TEST(AttentionMemory, TheWitnessSeesAScoreMatrixPerHeadAndTilesStayWithinTheAllowance) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "resident memory is not meaningful under a sanitizer";
  testing::TempFolder folder;
  const std::string out = folder.path("results.json");
  const std::string id = "correctness.forward.normal.b1.h2x2.q1024.k1024.d64.causal";
  const auto command =
      testing::run_cli("run attention --device cpu -s cpu-fast -s cpu-naive --seed 3 --case " + id + " -o " + out);
  ASSERT_EQ(command.exit_code, 0) << command.output;
  const RunResults results = load_results(out);
  const CaseResult& fast = testing::case_of(testing::entry_of(results, "cpu-fast"), id);
  const CaseResult& naive = testing::case_of(testing::entry_of(results, "cpu-naive"), id);
  const double allowance = fast.metrics.at("tile_memory_allowance_bytes").get<double>();
  const std::string seen = "cpu-fast " + fast.metrics.dump() + "\ncpu-naive " + naive.metrics.dump();
  // cpu-naive holds a 1024 x 1024 float score matrix: 4 MiB, all of it
  // seen (the peak is read in pages: exactly 4 MiB on some runs).
  EXPECT_GE(naive.metrics.at("forward_peak_working_bytes").get<double>(), 4.0 * (1 << 20)) << seen;
  EXPECT_LT(fast.metrics.at("forward_peak_working_bytes").get<double>(), allowance) << seen;
  EXPECT_DOUBLE_EQ(testing::entry_of(results, "cpu-fast").scores->dimensions.at("memory").score, 100.0) << seen;
}

harness::CaseResult watched(const std::string& id, double peak_mib, double allowance_mib, Verdict verdict) {
  harness::CaseResult c;
  c.id = id;
  c.suite = Suite::correctness;
  c.params = {{"op", "backward"}};
  c.verdict = verdict;
  c.metrics = {{"backward_peak_working_bytes", peak_mib * (1 << 20)},
               {"tile_memory_allowance_bytes", allowance_mib * (1 << 20)}};
  return c;
}

// Within the allowance 100, beyond it allowance / peak with the peak less
// 0.5 MiB, a failed case 0; the mean over the watched cases.
TEST(AttentionMemory, APeakBeyondTheAllowanceCostsItsRatio) {
  harness::EntryResult entry;
  entry.cases = {watched("within", 2.4, 2.0, Verdict::pass), watched("beyond", 8.5, 2.0, Verdict::pass),
                 watched("failed", 0.5, 2.0, Verdict::wrong_answer)};
  harness::CaseResult unwatched;
  unwatched.params = {{"op", "forward"}};
  entry.cases.push_back(unwatched);
  const harness::DimensionScore memory = attention::memory_score(entry);
  EXPECT_TRUE(memory.measured);
  EXPECT_DOUBLE_EQ(memory.score, 100.0 * (1.0 + 2.0 / 8.0 + 0.0) / 3.0);
  EXPECT_NE(memory.detail.find("4.00x what tiles need (beyond)"), std::string::npos) << memory.detail;
  EXPECT_FALSE(attention::memory_score(harness::EntryResult{}).measured);
}

// NumPy's attention, two runs of one build: a peak of 2.82 MiB, then 3.02
// MiB, against 1.47 MiB allowed. Rounded to the MiB below, the case's score
// fell from 74% to 49% and the dimension (20 cases) by 1.4 points, failing
// the CI gate; the wobble now costs the case about as much as it adds to
// the peak (7%), a few points.
TEST(AttentionMemory, APeaksRunToRunWobbleCostsAFewPointsNotAWholeMiB) {
  const double allowance = 1544192.0 / (1 << 20);
  harness::EntryResult before, after;
  before.cases = {watched("q100", 2952064.0 / (1 << 20), allowance, Verdict::pass)};
  after.cases = {watched("q100", 3165056.0 / (1 << 20), allowance, Verdict::pass)};
  const double a = attention::memory_score(before).score, b = attention::memory_score(after).score;
  EXPECT_GT(a, b);
  EXPECT_LT(a - b, 6.0) << a << " -> " << b;
}

TEST(AttentionMemory, TheAllowanceIsATilePerThreadAgainstEveryKey) {
  attention::AttnCase c{1, 2, 2, 1024, 4096, 64, true};
  const int64_t one = attention::tile_memory_allowance(c, 1), two = attention::tile_memory_allowance(c, 2);
  EXPECT_EQ(two - one, 4 * 128 * (4096 + 4 * 64));
  c.op = attention::Op::backward;
  EXPECT_EQ(attention::tile_memory_allowance(c, 1) - one, 8 * c.q_rows());
}

}  // namespace
}  // namespace harness
