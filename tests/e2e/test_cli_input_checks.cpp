// Bad input is refused before the first case, with exit 2 and a message
// naming the option and the value: a mistake found after a long run (or
// never) costs the run or passes for a result.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include "harness/challenge_api/challenge.h"
#include "harness/core/files.h"
#include "harness/results/results_json.h"
#include "harness/scoring/scoring.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::run_cli;
using testing::TempFolder;

const std::string kCase = "correctness.normal.r64.v1024.k10";
const std::string kOneCase = "run softmax_topk -s cpu-fast --device cpu -q --case " + kCase;

struct BadInput {
  std::string arguments;
  std::string expected;  // part of the message
};

// Each must exit 2 with `expected` in its output, and leave no results
// file: the check came before any work.
void expect_refused(const std::vector<BadInput>& inputs) {
  for (const auto& input : inputs) {
    TempFolder tmp;
    const auto r = run_cli(input.arguments + " -o " + tmp.path("r.json"));
    EXPECT_EQ(r.exit_code, 2) << input.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(input.expected), std::string::npos) << input.arguments << "\n" << r.output;
    EXPECT_FALSE(file_exists(tmp.path("r.json"))) << input.arguments << ": refused only after starting";
  }
}

TEST(CliInput, TimeoutsThatNeverFireOrAreNotNumbersAreRefused) {
  expect_refused({
      {kOneCase + " --timeout nan", "--timeout 'nan': expected seconds above 0 and at most 86400 (one day)"},
      {kOneCase + " --timeout 1e308", "--timeout '1e308'"},
      {kOneCase + " --timeout 1e18", "--timeout '1e18'"},
      {kOneCase + " --timeout 86401", "--timeout '86401'"},
      {kOneCase + " --timeout inf", "--timeout 'inf'"},
      {kOneCase + " --timeout 10s", "--timeout '10s'"},
      {kOneCase + " --timeout -1", "--timeout '-1'"},
      {kOneCase + " --timeout 0", "--timeout '0'"},
  });
  // The message for 0 prints readable numbers, not CLI11's 300-digit bound.
  TempFolder tmp;
  const auto zero = run_cli(kOneCase + " --timeout 0 -o " + tmp.path("r.json"));
  size_t longest_number = 0, digits = 0;
  for (char c : zero.output) {
    digits = std::isdigit(static_cast<unsigned char>(c)) ? digits + 1 : 0;
    longest_number = std::max(longest_number, digits);
  }
  EXPECT_LT(longest_number, 12u) << zero.output;
}

TEST(CliInput, MalformedShardsAreRefusedAndAnEmptyShardSaysSo) {
  expect_refused({
      {kOneCase + " --shard 1/2/3", "--shard '1/2/3': expected I/N"},
      {kOneCase + " --shard 1/2x", "--shard '1/2x'"},
      {kOneCase + " --shard /2", "--shard '/2'"},
      {kOneCase + " --shard 0/2", "--shard '0/2'"},
      {kOneCase + " --shard 99999999999/99999999999", "--shard '99999999999/99999999999'"},
      // One case, a million shards: shard 2 would exit 0 having judged nothing.
      {kOneCase + " --shard 2/1000000", "--shard 2/1000000: this shard gets no case: the selection holds 1 case"},
  });
}

TEST(CliInput, NegativeAndOutOfRangeSeedsAreRefused) {
  expect_refused({
      {kOneCase + " --seed -1",
       "--seed '-1': expected a whole number from 0 to 18446744073709551615 (a seed cannot be negative)"},
      {kOneCase + " --seed 18446744073709551616", "--seed '18446744073709551616': out of range"},
      {kOneCase + " --seed 12abc", "--seed '12abc'"},
      {kOneCase + " --seed 1e3", "--seed '1e3'"},
  });
}

// A misspelt defence would stay on while the test that names it believes it
// off; one switched off is said, and recorded in the results.
TEST(CliInput, WitnessPartsSwitchedOffAreNamedOrRefused) {
  TempFolder tmp;
  const auto bad = run_cli("run softmax_topk -s cpu-naive --device cpu --case " + kCase + " -o " + tmp.path("a.json"),
                           "HARNESS_WITNESS_DISABLE=gpu-stagin");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("'gpu-stagin', which is not one of its parts"), std::string::npos) << bad.output;
  const auto off = run_cli("run softmax_topk -s cpu-naive --device cpu --case " + kCase + " -o " + tmp.path("b.json"),
                           "HARNESS_WITNESS_DISABLE=device-memory-verdict");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_NE(off.output.find("switched off by HARNESS_WITNESS_DISABLE: [\"device-memory-verdict\"]"), std::string::npos)
      << off.output;
  EXPECT_EQ(load_results(tmp.path("b.json")).run.options["witness_disabled"],
            nlohmann::json({"device-memory-verdict"}));
}

TEST(CliInput, ACaseOfAnotherChallengeOrAnEmptyIdBlamesTheCase) {
  const std::string other = find_challenge("layernorm_backward").cases().at(0).id;
  expect_refused({
      {"run softmax_topk -s cpu-fast --device cpu --case " + other,
       fmt::format("no case '{}' in softmax_topk: it is a case of layernorm_backward", other)},
      {"run softmax_topk --device cpu --case " + other, "it is a case of layernorm_backward"},
      {"run softmax_topk -s cpu-fast --device cpu --case ''", "--case '': an empty case id"},
      {"run softmax_topk -s cpu-fast --device cpu --suite perf --case " + kCase,
       fmt::format("no case '{}' in the selected suites: it is a case of the correctness suite", kCase)},
  });
}

TEST(CliInput, OutputsThatCannotBeWrittenAreRefusedBeforeTheFirstCase) {
  TempFolder tmp;
  std::filesystem::create_directories(tmp.path("a-folder"));
  std::ofstream(tmp.path("a-file")) << "x";
  expect_refused({
      {kOneCase + " --md " + tmp.path("a-folder"), fmt::format("--md '{}': is a folder", tmp.path("a-folder"))},
      {kOneCase + " --junit " + tmp.path("a-folder"), fmt::format("--junit '{}': is a folder", tmp.path("a-folder"))},
      {kOneCase + " --md " + tmp.path("a-file/report.md"),
       "--md '" + tmp.path("a-file/report.md") + "': cannot be written"},
      {kOneCase + " --junit /proc/no-such-folder/junit.xml",
       "--junit '/proc/no-such-folder/junit.xml': cannot be written"},
      {kOneCase + " --md " + tmp.path("same") + " --junit " + tmp.path("same"), "--md and --junit both name"},
  });
  // -o naming a folder: the folder is untouched, and nothing ran.
  const auto folder = run_cli(kOneCase + " -o " + tmp.path("a-folder"));
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_NE(folder.output.find("-o '" + tmp.path("a-folder") + "': is a folder"), std::string::npos) << folder.output;
  // The probes left nothing behind.
  size_t files = 0;
  for ([[maybe_unused]] const auto& item : std::filesystem::directory_iterator(tmp.path("."))) ++files;
  EXPECT_EQ(files, 2u) << "only a-folder and a-file";
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path("a-folder")));
}

TEST(CliInput, ReportGateAndMergeRefuseUnwritableOutputs) {
  TempFolder tmp;
  std::filesystem::create_directories(tmp.path("a-folder"));
  const std::string golden = std::string(HARNESS_SOURCE_DIR) + "/tests/golden/run_a.json";
  for (const std::string& command :
       {"report " + golden, "gate " + golden + " --baseline " + golden, "merge " + golden}) {
    const auto r = run_cli(command + " -o " + tmp.path("a-folder"));
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("is a folder"), std::string::npos) << command << "\n" << r.output;
  }
}

TEST(CliInput, ARunKilledBeforeItsFirstCaseLeavesNoOlderResultsBehind) {
  TempFolder tmp;
  const std::string out = tmp.path("results.json");
  // The previous run's complete results, of another seed.
  nlohmann::json previous =
      nlohmann::json::parse(read_text_file(std::string(HARNESS_SOURCE_DIR) + "/tests/golden/run_a.json"));
  previous["run"]["seed"] = 1;
  previous["run"]["complete"] = true;
  write_file_atomically(out, previous.dump());

  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cli = HARNESS_CLI;
    ::execl(cli.c_str(), cli.c_str(), "run", "softmax_topk", "-s", "cpu-fast", "--device", "cpu", "--case",
            kCase.c_str(), "--seed", "2", "-q", "-o", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The first version of the file that names this run's seed must hold no
  // case yet: the header came before the bandwidth measurement and the case.
  std::optional<RunResults> first_seen;
  for (int i = 0; i < 3000 && !first_seen; ++i) {
    try {
      RunResults now = load_results(out);
      if (now.run.seed == 2) first_seen = std::move(now);
    } catch (const std::exception&) {
    }
    if (!first_seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  testing::remove_run_folders(pid);
  ASSERT_TRUE(first_seen.has_value()) << "the run never wrote its own header";
  EXPECT_FALSE(first_seen->run.complete);
  EXPECT_TRUE(first_seen->entries.empty()) << "written only after a case finished";
  const RunResults left = load_results(out);
  EXPECT_EQ(left.run.seed, 2u);
  EXPECT_FALSE(left.run.complete);
}

class DuplicatedResults : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = std::string(HARNESS_SOURCE_DIR) + "/tests/golden/run_a.json";
    const nlohmann::json original = nlohmann::json::parse(read_text_file(golden_));
    nlohmann::json entry_twice = original;
    entry_twice["results"].push_back(original["results"][0]);
    write_file_atomically(tmp_.path("entry_twice.json"), entry_twice.dump());
    nlohmann::json case_twice = original;
    case_twice["results"][1]["cases"].push_back(original["results"][1]["cases"][0]);
    write_file_atomically(tmp_.path("case_twice.json"), case_twice.dump());
    entry_name_ = original["results"][0]["submission"]["name"].get<std::string>();
    case_entry_name_ = original["results"][1]["submission"]["name"].get<std::string>();
    case_id_ = original["results"][1]["cases"][0]["id"].get<std::string>();
  }
  TempFolder tmp_;
  std::string golden_, entry_name_, case_entry_name_, case_id_;
};

TEST_F(DuplicatedResults, ReportAndGateRefuseThemNamingTheDuplicate) {
  const std::string entry_message =
      fmt::format("the entry of softmax_topk / {} on cpu appears more than once", entry_name_);
  const std::string case_message = fmt::format(
      "case {} appears more than once in the entry of softmax_topk / {} on cpu", case_id_, case_entry_name_);
  const std::vector<BadInput> inputs = {
      {"report " + tmp_.path("entry_twice.json"), entry_message},
      {"report " + tmp_.path("case_twice.json"), case_message},
      {"gate " + tmp_.path("entry_twice.json") + " --baseline " + golden_, entry_message},
      {"gate " + golden_ + " --baseline " + tmp_.path("case_twice.json"), case_message},
  };
  for (const auto& input : inputs) {
    const auto r = run_cli(input.arguments);
    EXPECT_EQ(r.exit_code, 2) << input.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(input.expected), std::string::npos) << input.arguments << "\n" << r.output;
  }
  // The file they were made from is fine.
  EXPECT_EQ(run_cli("report " + golden_ + " -o " + tmp_.path("ok.md")).exit_code, 0);
}

TEST(CliInput, MergeRefusesShardsOfDifferentRuns) {
  TempFolder tmp;
  const nlohmann::json original =
      nlohmann::json::parse(read_text_file(std::string(HARNESS_SOURCE_DIR) + "/tests/golden/run_a.json"));
  // Two halves of one run: each entry in one of them, scored as a shard
  // scores its own entries (merge re-derives every file's scores).
  const auto half = [&](size_t entry) {
    RunResults r = results_from_json(original, "run_a.json");
    r.entries = {r.entries[entry]};
    score_results(r);
    return to_json(r);
  };
  const nlohmann::json first = half(0), second = half(1);
  write_file_atomically(tmp.path("first.json"), first.dump());
  const auto variant = [&](const std::string& name, const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = second;
    change(j);
    write_file_atomically(tmp.path(name), j.dump());
    return tmp.path(name);
  };
  const std::string same = variant("same.json", [](nlohmann::json&) {});
  const uint64_t seed = original["run"]["seed"].get<uint64_t>();
  const std::vector<BadInput> inputs = {
      {variant("seed.json", [](nlohmann::json& j) { j["run"]["seed"] = j["run"]["seed"].get<uint64_t>() + 1; }),
       fmt::format("ran with seed {} but {} with seed {}", seed, tmp.path("seed.json"), seed + 1)},
      {variant("quick.json",
               [](nlohmann::json& j) { j["run"]["options"]["quick"] = !j["run"]["options"]["quick"].get<bool>(); }),
       "option quick is"},
      {variant("commit.json", [](nlohmann::json& j) { j["run"]["git_commit"] = "0123456789ab"; }),
       "at commit 0123456789ab"},
  };
  ASSERT_FALSE(original["run"]["git_commit"].get<std::string>().empty());
  for (const auto& input : inputs) {
    const auto r =
        run_cli(fmt::format("merge {} {} -o {}", tmp.path("first.json"), input.arguments, tmp.path("m.json")));
    EXPECT_EQ(r.exit_code, 2) << input.arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(input.expected), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(tmp.path("first.json")), std::string::npos) << "names both files\n" << r.output;
  }
  const auto ok = run_cli(fmt::format("merge {} {} -o {}", tmp.path("first.json"), same, tmp.path("m.json")));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

}  // namespace
}  // namespace harness
