// harness gate on timings, end to end on real runs. These compare timings,
// so they run serially (no other test loading the machine).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace harness {
namespace {

using testing::kFixtureIndexEnvironment;
using testing::run_cli;
using testing::TempFolder;

// The slowdown these two tests gate at. Its justification is a measurement
// of the machine CI runs on (a shared 2-core VM): in 36 A/A comparisons (12
// pairs of runs of cpu-fast, 3 perf cases each, seconds apart) the median
// moved by up to 30% between runs while each run's own samples spread by a
// few percent, so the rank test calls such a shift significant and only the
// threshold can absorb it. The default 10% is for dedicated machines. At 50%
// the A/A pair below passes, and a submission doing its work three times
// (+200%, still +110% after a 30% swing the wrong way) fails.
constexpr int kSharedMachineSlowdownPercent = 50;

TEST(GateCli, TwoRunsOfTheSameBuildGateClean) {
  TempFolder tmp;
  const std::string run =
      "run softmax_topk -s cpu-fast --device cpu -q --case "
      "perf.normal.r256.v131072.k8,correctness.normal.r64.v1024.k10 -o ";
  ASSERT_EQ(run_cli(run + tmp.path("a.json")).exit_code, 0);
  ASSERT_EQ(run_cli(run + tmp.path("b.json")).exit_code, 0);
  const auto gate = run_cli(fmt::format("gate {} --baseline {} --max-slowdown {}", tmp.path("b.json"),
                                        tmp.path("a.json"), kSharedMachineSlowdownPercent));
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  EXPECT_NE(gate.output.find("Gate passed"), std::string::npos) << gate.output;
  EXPECT_NE(gate.output.find("1 timings compared"), std::string::npos) << gate.output;
}

TEST(GateCli, ASlowedDownSubmissionFailsTheGate) {
  TempFolder tmp;
  const std::string run =
      "run softmax_topk -s fixture-tunable --device cpu -q --quick --case perf.normal.r64.v262144.k32 -o ";
  ASSERT_EQ(run_cli(run + tmp.path("before.json"), kFixtureIndexEnvironment).exit_code, 0);
  ASSERT_EQ(run_cli(run + tmp.path("after.json"), kFixtureIndexEnvironment + " HARNESS_FIXTURE_REPEAT=3").exit_code, 0);
  const auto gate = run_cli(fmt::format("gate {} --baseline {} --max-slowdown {}", tmp.path("after.json"),
                                        tmp.path("before.json"), kSharedMachineSlowdownPercent));
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("**slower** softmax_topk / fixture-tunable on cpu `perf.normal.r64.v262144.k32`"),
            std::string::npos)
      << gate.output;
  EXPECT_NE(gate.output.find("rank test p ="), std::string::npos);
}

}  // namespace
}  // namespace harness
