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

TEST(AttentionMemory, AScoreMatrixPerHeadCostsTheMemoryScoreAndTilesDoNot) {
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
  // cpu-naive holds a 1024 x 1024 float score matrix: 4 MiB.
  EXPECT_GT(naive.metrics.at("forward_peak_working_bytes").get<double>(), 4.0 * (1 << 20)) << seen;
  EXPECT_GT(naive.metrics.at("forward_peak_working_bytes").get<double>(), allowance) << seen;
  EXPECT_LT(fast.metrics.at("forward_peak_working_bytes").get<double>(), allowance) << seen;
  const auto memory = [&](const char* name) {
    return testing::entry_of(results, name).scores->dimensions.at("memory").score;
  };
  EXPECT_DOUBLE_EQ(memory("cpu-fast"), 100.0) << seen;
  EXPECT_LT(memory("cpu-naive"), 70.0) << seen;
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
