// gate, merge and --shard end to end on real runs. These compare timings, so
// they run serially (no other test loading the machine).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <tuple>

#include "harness/core/files.h"
#include "harness/results/results_json.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::run_cli;
using testing::TempFolder;

const std::string kFixtures = std::string("HARNESS_SUBMISSION_INDEX=") + HARNESS_FIXTURE_INDEX;

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
  const std::string run = "run softmax_topk -s cpu-fast --device cpu -q --case perf.normal.r256.v131072.k8,correctness.normal.r64.v1024.k10 -o ";
  ASSERT_EQ(run_cli(run + tmp.path("a.json")).exit_code, 0);
  ASSERT_EQ(run_cli(run + tmp.path("b.json")).exit_code, 0);
  const auto gate = run_cli(
      fmt::format("gate {} --baseline {} --max-slowdown {}", tmp.path("b.json"), tmp.path("a.json"), kSharedMachineSlowdownPercent));
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  EXPECT_NE(gate.output.find("Gate passed"), std::string::npos) << gate.output;
  EXPECT_NE(gate.output.find("1 timings compared"), std::string::npos) << gate.output;
}

TEST(GateCli, ASlowedDownSubmissionFailsTheGate) {
  TempFolder tmp;
  const std::string run = "run softmax_topk -s fixture-tunable --device cpu -q --quick --case perf.normal.r64.v262144.k32 -o ";
  ASSERT_EQ(run_cli(run + tmp.path("before.json"), kFixtures).exit_code, 0);
  ASSERT_EQ(run_cli(run + tmp.path("after.json"), kFixtures + " HARNESS_FIXTURE_REPEAT=3").exit_code, 0);
  const auto gate = run_cli(fmt::format("gate {} --baseline {} --max-slowdown {}", tmp.path("after.json"), tmp.path("before.json"),
                                        kSharedMachineSlowdownPercent));
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("**slower** softmax_topk / fixture-tunable on cpu `perf.normal.r64.v262144.k32`"), std::string::npos)
      << gate.output;
  EXPECT_NE(gate.output.find("rank test p ="), std::string::npos);
}

TEST(GateCli, ANewlyFailingCaseFailsTheGateWithItsReproduceCommand) {
  TempFolder tmp;
  const std::string run = "run softmax_topk -s fixture-tunable --device cpu -q --suite correctness --seed 3 -o ";
  ASSERT_EQ(run_cli(run + tmp.path("before.json"), kFixtures).exit_code, 0);
  EXPECT_EQ(run_cli(run + tmp.path("after.json"), kFixtures + " HARNESS_FIXTURE_WRONG_K=10").exit_code, 1);
  const auto gate = run_cli(fmt::format("gate {} --baseline {} -o {}", tmp.path("after.json"), tmp.path("before.json"), tmp.path("gate.md")));
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("**newly failing** softmax_topk / fixture-tunable on cpu `correctness.normal.r64.v1024.k10`: wrong_answer"),
            std::string::npos) << gate.output;
  EXPECT_NE(gate.output.find("--case correctness.normal.r64.v1024.k10 --seed 3"), std::string::npos);
  EXPECT_NE(gate.output.find("**score drop**"), std::string::npos);
  EXPECT_EQ(read_text_file(tmp.path("gate.md")), gate.output);
}

TEST(GateCli, UnusableInputExitsWithTwo) {
  TempFolder tmp;
  ASSERT_EQ(run_cli("run softmax_topk -s cpu-fast --device cpu -q --case correctness.normal.r64.v1024.k10 -o " + tmp.path("r.json")).exit_code, 0);
  nlohmann::json other = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  other["devices"][0]["id"] = "cuda";
  for (auto& entry : other["results"]) entry["device"] = "cuda";
  std::ofstream(tmp.path("other_device.json")) << other.dump();
  nlohmann::json old = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  old["schema"] = "harness.results/v0";
  std::ofstream(tmp.path("old.json")) << old.dump();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {tmp.path("missing.json"), "cannot open"},
      {tmp.path("old.json"), "schema 'harness.results/v0'"},
      {tmp.path("other_device.json"), "nothing to compare"},
  };
  for (const auto& [baseline, expected] : cases) {
    const auto r = run_cli(fmt::format("gate {} --baseline {}", tmp.path("r.json"), baseline));
    EXPECT_EQ(r.exit_code, 2) << baseline << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
  }
}

TEST(GateCli, ResultsFromAnotherHostAndCpuModelGateOnVerdicts) {
  // The README's test command gates a quick run against a baseline committed
  // from one machine; CI runs it on others (AMD or Intel, any name).
  TempFolder tmp;
  ASSERT_EQ(run_cli("run softmax_topk -s cpu-fast --device cpu -q --case correctness.normal.r64.v1024.k10 -o " + tmp.path("r.json")).exit_code, 0);
  nlohmann::json other = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  other["run"]["host"]["hostname"] = "ci-runner-7";
  other["run"]["host"]["cpu_model"] = "Intel(R) Xeon(R) Processor";
  other["devices"][0]["name"] = "Intel(R) Xeon(R) Processor";
  std::ofstream(tmp.path("other_host.json")) << other.dump();
  for (const std::string timings : {"", " --no-timings"}) {
    const auto gate = run_cli(fmt::format("gate {} --baseline {}{}", tmp.path("other_host.json"), tmp.path("r.json"), timings));
    EXPECT_EQ(gate.exit_code, 0) << gate.output;
    EXPECT_NE(gate.output.find("Gate passed: no regression (1 cases, 0 timings compared)"), std::string::npos) << gate.output;
    EXPECT_NE(gate.output.find("these results on cpu (Intel(R) Xeon(R) Processor on ci-runner-7)"), std::string::npos) << gate.output;
  }
}

using CaseKey = std::tuple<std::string, std::string, std::string, std::string, std::string, uint64_t>;

std::set<CaseKey> case_keys(const RunResults& r) {
  std::set<CaseKey> keys;
  for (const auto& e : r.entries) {
    for (const auto& c : e.cases) {
      keys.emplace(e.challenge, e.submission.name, e.device, c.id, std::string(verdict_name(c.verdict)), c.seed);
    }
  }
  return keys;
}

TEST(MergeCli, MergedShardsEqualTheUnshardedRun) {
  TempFolder tmp;
  const std::string run = "run softmax_topk -s cpu-fast,cpu-naive,cpu-mutant-rows-mixed --device cpu -q --suite correctness,edge --seed 17 ";
  // The mutant fails its cases, but mutants never fail a run.
  ASSERT_EQ(run_cli(run + "-o " + tmp.path("all.json")).exit_code, 0);
  std::string shards;
  size_t shard_cases = 0;
  for (int i = 1; i <= 3; ++i) {
    const std::string path = tmp.path(fmt::format("shard{}.json", i));
    run_cli(run + fmt::format("--shard {}/3 -o {}", i, path));
    for (const auto& e : load_results(path).entries) shard_cases += e.cases.size();
    shards += " " + path;
  }
  const auto merge = run_cli("merge" + shards + " -o " + tmp.path("merged.json"));
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  const RunResults all = load_results(tmp.path("all.json"));
  const RunResults merged = load_results(tmp.path("merged.json"));
  EXPECT_EQ(case_keys(merged), case_keys(all));
  EXPECT_EQ(shard_cases, case_keys(all).size()) << "every case in exactly one shard";
  for (size_t i = 0; i < all.entries.size(); ++i) {
    ASSERT_TRUE(merged.entries[i].scores && all.entries[i].scores);
    EXPECT_EQ(merged.entries[i].scores->grade, all.entries[i].scores->grade) << all.entries[i].submission.name;
  }
  const auto twice = run_cli(fmt::format("merge {} {} -o {}", tmp.path("shard1.json"), tmp.path("shard1.json"), tmp.path("bad.json")));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.output.find("is in both"), std::string::npos) << twice.output;
}

}  // namespace
}  // namespace harness
