// harness gate on verdicts and scores, harness merge and --shard, end to end
// on real runs. Nothing here compares timings, so these run beside other tests.
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

using testing::kFixtureIndexEnvironment;
using testing::run_cli;
using testing::TempFolder;

TEST(GateCli, ANewlyFailingCaseFailsTheGateWithItsReproduceCommand) {
  TempFolder tmp;
  const std::string run = "run softmax_topk -s fixture-tunable --device cpu -q --suite correctness --seed 3 -o ";
  ASSERT_EQ(run_cli(run + tmp.path("before.json"), kFixtureIndexEnvironment).exit_code, 0);
  EXPECT_EQ(run_cli(run + tmp.path("after.json"), kFixtureIndexEnvironment + " HARNESS_FIXTURE_WRONG_K=10").exit_code,
            1);
  const auto gate = run_cli(
      fmt::format("gate {} --baseline {} -o {}", tmp.path("after.json"), tmp.path("before.json"), tmp.path("gate.md")));
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(
      gate.output.find(
          "**newly failing** softmax_topk / fixture-tunable on cpu `correctness.normal.r64.v1024.k10`: wrong_answer"),
      std::string::npos)
      << gate.output;
  EXPECT_NE(gate.output.find("--case correctness.normal.r64.v1024.k10 --seed 3"), std::string::npos);
  EXPECT_NE(gate.output.find("**score drop**"), std::string::npos);
  EXPECT_EQ(read_text_file(tmp.path("gate.md")), gate.output);
}

TEST(GateCli, UnusableInputExitsWithTwo) {
  TempFolder tmp;
  ASSERT_EQ(run_cli("run softmax_topk -s cpu-fast --device cpu -q --case correctness.normal.r64.v1024.k10 -o " +
                    tmp.path("r.json"))
                .exit_code,
            0);
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

// Edited results are refused (exit 2, naming the entry) by gate, report and
// merge; an interrupted run fails the gate unless asked to gate what it holds.
TEST(GateCli, EditedResultsAreRefusedAndAnIncompleteRunFails) {
  TempFolder tmp;
  const std::string golden = std::string(HARNESS_SOURCE_DIR) + "/tests/golden/run_a.json";
  nlohmann::json edited = nlohmann::json::parse(read_text_file(golden));
  for (auto& entry : edited["results"]) {
    if (entry["submission"]["name"] == "cpu-mutant-rows-mixed") entry["scores"]["overall"] = 100.0;
  }
  std::ofstream(tmp.path("edited.json")) << edited.dump();
  for (const std::string& command : {fmt::format("gate {} --baseline {}", tmp.path("edited.json"), golden),
                                     fmt::format("gate {} --baseline {}", golden, tmp.path("edited.json")),
                                     fmt::format("report {}", tmp.path("edited.json")),
                                     fmt::format("merge {} -o {}", tmp.path("edited.json"), tmp.path("m.json"))}) {
    const auto r = run_cli(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("edited.json: softmax_topk / cpu-mutant-rows-mixed on cpu: the stored overall"),
              std::string::npos)
        << command << "\n"
        << r.output;
  }

  nlohmann::json interrupted = nlohmann::json::parse(read_text_file(golden));
  interrupted["run"]["complete"] = false;
  std::ofstream(tmp.path("interrupted.json")) << interrupted.dump();
  const auto failed = run_cli(fmt::format("gate {} --baseline {}", tmp.path("interrupted.json"), golden));
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("complete: false"), std::string::npos) << failed.output;
  const auto allowed =
      run_cli(fmt::format("gate {} --baseline {} --allow-incomplete", tmp.path("interrupted.json"), golden));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
}

TEST(GateCli, ResultsFromAnotherHostAndCpuModelGateOnVerdicts) {
  // The README's test command gates a quick run against a baseline committed
  // from one machine; CI runs it on others (AMD or Intel, any name).
  TempFolder tmp;
  ASSERT_EQ(run_cli("run softmax_topk -s cpu-fast --device cpu -q --case correctness.normal.r64.v1024.k10 -o " +
                    tmp.path("r.json"))
                .exit_code,
            0);
  nlohmann::json other = nlohmann::json::parse(read_text_file(tmp.path("r.json")));
  other["run"]["host"]["hostname"] = "ci-runner-7";
  other["run"]["host"]["cpu_model"] = "Intel(R) Xeon(R) Processor";
  other["devices"][0]["name"] = "Intel(R) Xeon(R) Processor";
  std::ofstream(tmp.path("other_host.json")) << other.dump();
  for (const std::string timings : {"", " --no-timings"}) {
    const auto gate =
        run_cli(fmt::format("gate {} --baseline {}{}", tmp.path("other_host.json"), tmp.path("r.json"), timings));
    EXPECT_EQ(gate.exit_code, 0) << gate.output;
    EXPECT_NE(gate.output.find("Gate passed: no regression (1 cases, 0 timings compared)"), std::string::npos)
        << gate.output;
    EXPECT_NE(gate.output.find("these results on cpu (Intel(R) Xeon(R) Processor on ci-runner-7)"), std::string::npos)
        << gate.output;
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
  const std::string run =
      "run softmax_topk -s cpu-fast,cpu-naive,cpu-mutant-rows-mixed --device cpu -q --suite correctness --seed 17 ";
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
  const auto twice =
      run_cli(fmt::format("merge {} {} -o {}", tmp.path("shard1.json"), tmp.path("shard1.json"), tmp.path("bad.json")));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.output.find("is in both"), std::string::npos) << twice.output;
}

}  // namespace
}  // namespace harness
