// The gate on synthetic results: regressions against a baseline run, every
// rule, exactly.
#include <gtest/gtest.h>

#include <string>

#include "harness/compare/gate.h"
#include "harness/core/error.h"
#include "synthetic_results.h"

namespace harness {
namespace {

using testing::around;
using testing::make_case;
using testing::results;

TEST(Gate, PerformanceScoresNeverTripTheScoreThreshold) {
  // Same verdicts, a performance score that moved by 40 points (a noisy
  // peak): not a regression; only the rank tests judge timings.
  auto before = results({make_case("c1", Suite::correctness, Verdict::pass)});
  auto after = before;
  before.entries[0].scores->dimensions["performance"] = DimensionScore{true, 90, 0.25, ""};
  after.entries[0].scores->dimensions["performance"] = DimensionScore{true, 50, 0.25, ""};
  const auto report = gate_results(after, before, {});
  EXPECT_TRUE(report.regressions.empty());
}

TEST(Gate, IdenticalResultsPass) {
  const auto r = results(
      {make_case("c1", Suite::correctness, Verdict::pass), make_case("p1", Suite::perf, Verdict::pass, around(1000))});
  const auto report = gate_results(r, r, {});
  EXPECT_TRUE(report.regressions.empty());
  EXPECT_EQ(report.cases_compared, 2u);
  EXPECT_EQ(report.timings_compared, 1u);
}

TEST(Gate, ANewlyFailingOrMissingCaseIsARegressionWithItsReproduceCommand) {
  const auto before =
      results({make_case("c1", Suite::correctness, Verdict::pass), make_case("c2", Suite::correctness, Verdict::pass)});
  auto after = results({make_case("c1", Suite::correctness, Verdict::wrong_answer)});
  after.entries[0].cases[0].message = "row 3 is not a top-k";
  const auto report = gate_results(after, before, {});
  // c1 failing, c2 missing, and the scores that follow: the overall
  // without performance, and correctness.
  ASSERT_EQ(report.regressions.size(), 4u);
  EXPECT_EQ(report.regressions[0].what, "newly failing");
  EXPECT_NE(report.regressions[0].detail.find("wrong_answer: row 3"), std::string::npos);
  EXPECT_EQ(report.regressions[0].reproduce, "harness run softmax_topk --case c1");
  EXPECT_EQ(report.regressions[1].what, "missing");
  EXPECT_EQ(report.regressions[2].what, "score drop");
  EXPECT_NE(report.regressions[2].detail.find("overall without performance"), std::string::npos);
  EXPECT_NE(report.regressions[3].detail.find("correctness: 100.0 -> 0.0"), std::string::npos)
      << report.regressions[3].detail;
  const std::string md = render_gate_markdown(report, {});
  EXPECT_NE(md.find("Gate failed: 4 regressions"), std::string::npos);
  EXPECT_LT(md.find("Regressions"), md.find("Thresholds"));
}

TEST(Gate, SlowerOnlyBeyondTheThresholdAndBeyondNoise) {
  const auto before = results({make_case("p1", Suite::perf, Verdict::pass, around(1000))});
  // 5% slower: under the 10% threshold.
  EXPECT_TRUE(gate_results(results({make_case("p1", Suite::perf, Verdict::pass, around(1050))}), before, {})
                  .regressions.empty());
  // 30% slower, consistently: a regression.
  const auto slow = gate_results(results({make_case("p1", Suite::perf, Verdict::pass, around(1300))}), before, {});
  ASSERT_EQ(slow.regressions.size(), 1u);
  EXPECT_EQ(slow.regressions[0].what, "slower");
  EXPECT_NE(slow.regressions[0].detail.find("+30.0%"), std::string::npos) << slow.regressions[0].detail;
  // Two bimodal runs whose medians differ by 50% but whose samples overlap
  // fully: no evidence, no regression.
  const auto noise =
      gate_results(results({make_case("p1", Suite::perf, Verdict::pass, {1000, 1000, 1500, 1500, 1500})}),
                   results({make_case("p1", Suite::perf, Verdict::pass, {1000, 1500, 1500, 1500, 1000})}), {});
  EXPECT_TRUE(noise.regressions.empty());
  // Faster is an improvement.
  const auto fast = gate_results(results({make_case("p1", Suite::perf, Verdict::pass, around(600))}), before, {});
  ASSERT_EQ(fast.improvements.size(), 1u);
  EXPECT_EQ(fast.improvements[0].what, "faster");
}

// A slowdown measured while other processes held the machine may be the
// machine's: said in the notes with the load, not failed. The same slowdown
// on a quiet machine is a regression.
TEST(Gate, ASlowdownTimedWhileOthersHeldTheCoresIsANoteNotARegression) {
  const auto before = results({make_case("p1", Suite::perf, Verdict::pass, around(1000))});
  const auto slower_with = [&](double other_cores) {
    RunResults now = results({make_case("p1", Suite::perf, Verdict::pass, around(1300))});
    now.entries[0].cases[0].timing->machine_load = TimingResult::MachineLoad{other_cores, 3.0, 0.5, 4};
    return gate_results(now, before, {});
  };
  const GateReport busy = slower_with(1.5);
  EXPECT_TRUE(busy.regressions.empty());
  ASSERT_EQ(busy.notes.size(), 1u);
  EXPECT_NE(busy.notes[0].find("slower (median"), std::string::npos) << busy.notes[0];
  EXPECT_NE(busy.notes[0].find("other processes held 1.50 of the machine's 4 cores: not counted as a regression"),
            std::string::npos)
      << busy.notes[0];
  // A quarter of the cores or less: the machine was quiet enough.
  const GateReport quiet = slower_with(1.0);
  ASSERT_EQ(quiet.regressions.size(), 1u);
  EXPECT_EQ(quiet.regressions[0].what, "slower");
  // A baseline timed on a busy machine may hide a slowdown: said.
  RunResults busy_baseline = before;
  busy_baseline.entries[0].cases[0].timing->machine_load = TimingResult::MachineLoad{1.5, 3.0, 0.5, 4};
  const GateReport hidden =
      gate_results(results({make_case("p1", Suite::perf, Verdict::pass, around(1000))}), busy_baseline, {});
  EXPECT_TRUE(hidden.regressions.empty());
  ASSERT_EQ(hidden.notes.size(), 1u);
  EXPECT_NE(hidden.notes[0].find("1 of the 1 timings compared were taken in the baseline while other processes "
                                 "held more than a quarter"),
            std::string::npos)
      << hidden.notes[0];
  EXPECT_TRUE(
      gate_results(results({make_case("p1", Suite::perf, Verdict::pass, around(1000))}), before, {}).notes.empty());
}

// A worker whose claims the timing witness's floor raised (a fast median
// over an honest sum) is compared at the floor, as it is scored: its fast
// claims do not hide a slowdown, nor count as a speed-up.
TEST(Gate, TimingsAreComparedAsScoredNeverBelowTheWitnesssFloor) {
  const auto before = results({make_case("p1", Suite::perf, Verdict::pass, around(1000))});
  CaseResult raised = make_case("p1", Suite::perf, Verdict::pass, around(1000));
  raised.timing->witness = TimingResult::Witness{};
  raised.timing->witness->floor_ns = 1300;
  ASSERT_TRUE(raised.timing->raised_to_floor());
  const auto slow = gate_results(results({raised}), before, {});
  ASSERT_EQ(slow.regressions.size(), 1u);
  EXPECT_EQ(slow.regressions[0].what, "slower");
  EXPECT_NE(slow.regressions[0].detail.find("(the witness's floor) (+30.0%)"), std::string::npos)
      << slow.regressions[0].detail;
  // The claims alone, as the gate once compared them, show no change.
  raised.timing->witness.reset();
  EXPECT_TRUE(gate_results(results({raised}), before, {}).regressions.empty());
}

TEST(Gate, TooFewSamplesAreNotComparedAndSaySo) {
  const auto report = gate_results(results({make_case("p1", Suite::perf, Verdict::pass, {2000, 2000, 2000})}),
                                   results({make_case("p1", Suite::perf, Verdict::pass, {1000, 1000, 1000})}), {});
  EXPECT_TRUE(report.regressions.empty());
  EXPECT_EQ(report.timings_compared, 0u);
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(report.notes[0].find("not compared (only 3 and 3 samples"), std::string::npos);
}

TEST(Gate, AnotherMachineGatesVerdictsButNotTimings) {
  const auto before = results(
      {make_case("c1", Suite::correctness, Verdict::pass), make_case("p1", Suite::perf, Verdict::pass, around(1000))},
      "host-a");
  const auto after = results(
      {make_case("c1", Suite::correctness, Verdict::pass), make_case("p1", Suite::perf, Verdict::pass, around(5000))},
      "host-b");
  const auto report = gate_results(after, before, {});
  EXPECT_TRUE(report.regressions.empty());
  EXPECT_EQ(report.timings_compared, 0u);
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(report.notes[0].find("timings were not"), std::string::npos) << report.notes[0];
  // Verdicts still count.
  const auto failing = results(
      {make_case("c1", Suite::correctness, Verdict::crash), make_case("p1", Suite::perf, Verdict::pass, around(1000))},
      "host-b");
  EXPECT_FALSE(gate_results(failing, before, {}).regressions.empty());
}

TEST(Gate, WithoutTimingsTheSameMachineGatesVerdictsAndScoresOnly) {
  // A shared runner's timings move with its neighbours: 5x slower on the
  // same host is not a regression when timings are switched off, a crash is.
  const auto before = results(
      {make_case("c1", Suite::correctness, Verdict::pass), make_case("p1", Suite::perf, Verdict::pass, around(1000))});
  const auto slower = results(
      {make_case("c1", Suite::correctness, Verdict::pass), make_case("p1", Suite::perf, Verdict::pass, around(5000))});
  GateOptions no_timings;
  no_timings.compare_timings = false;
  ASSERT_FALSE(gate_results(slower, before, {}).regressions.empty());
  const auto report = gate_results(slower, before, no_timings);
  EXPECT_TRUE(report.regressions.empty());
  EXPECT_EQ(report.timings_compared, 0u);
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(report.notes[0].find("--no-timings"), std::string::npos) << report.notes[0];
  const auto failing = results(
      {make_case("c1", Suite::correctness, Verdict::crash), make_case("p1", Suite::perf, Verdict::pass, around(1000))});
  EXPECT_FALSE(gate_results(failing, before, no_timings).regressions.empty());
}

TEST(Gate, AnotherCpuModelOnAnotherHostGatesVerdictsAndScores) {
  // A baseline committed from one CI runner, results from a runner of
  // another vendor: the verdict gate must work there, whatever the timings
  // and the performance score did.
  auto before = results(
      {make_case("c1", Suite::correctness, Verdict::pass), make_case("p1", Suite::perf, Verdict::pass, around(1000))},
      "runner-amd", "AMD EPYC");
  auto after = results(
      {make_case("c1", Suite::correctness, Verdict::pass), make_case("p1", Suite::perf, Verdict::pass, around(9000))},
      "runner-intel", "Intel(R) Xeon(R) Processor");
  before.entries[0].scores->dimensions["performance"] = DimensionScore{true, 95, 0.25, ""};
  after.entries[0].scores->dimensions["performance"] = DimensionScore{true, 20, 0.25, ""};
  for (const bool timings : {true, false}) {
    GateOptions o;
    o.compare_timings = timings;
    const auto report = gate_results(after, before, o);
    EXPECT_TRUE(report.regressions.empty()) << render_gate_markdown(report, o);
    EXPECT_EQ(report.cases_compared, 2u);
    EXPECT_EQ(report.timings_compared, 0u);
    const std::string notes = render_gate_markdown(report, o);
    EXPECT_NE(
        notes.find("cpu (AMD EPYC on runner-amd), these results on cpu (Intel(R) Xeon(R) Processor on runner-intel)"),
        std::string::npos)
        << notes;
  }
  const auto crashing = results(
      {make_case("c1", Suite::correctness, Verdict::crash), make_case("p1", Suite::perf, Verdict::pass, around(1000))},
      "runner-intel", "Intel(R) Xeon(R) Processor");
  GateOptions no_timings;
  no_timings.compare_timings = false;
  const auto report = gate_results(crashing, before, no_timings);
  ASSERT_EQ(report.regressions.size(), 3u) << render_gate_markdown(report, no_timings);
  EXPECT_EQ(report.regressions[0].what, "newly failing");
  EXPECT_EQ(report.regressions[1].what, "score drop");  // overall without performance
  EXPECT_EQ(report.regressions[2].what, "score drop");  // correctness
}

TEST(Gate, NothingComparableIsUnusableInput) {
  const auto cpu = results({make_case("c1", Suite::correctness, Verdict::pass)}, "a", "AMD EPYC");
  auto gpu = results({make_case("c1", Suite::correctness, Verdict::pass)}, "a", "NVIDIA H100");
  gpu.devices[0].id = "cuda";
  gpu.devices[0].kind = "cuda";
  gpu.entries[0].device = "cuda";
  try {
    gate_results(gpu, cpu, {});
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "nothing to compare: the baseline ran on cpu (AMD EPYC on a) and these results on cuda (NVIDIA H100"),
              std::string::npos)
        << e.what();
  }
}

// A baseline made with a GPU, gated on a machine without one: its GPU
// entries are left out, and the note says why.
TEST(Gate, EntriesOnADeviceUnavailableNowAreLeftOutSayingWhy) {
  auto with_gpu = [](bool available) {
    auto r = results({make_case("c1", Suite::correctness, Verdict::pass)});
    DeviceInfo gpu;
    gpu.id = gpu.kind = "cuda";
    gpu.name = "NVIDIA H100";
    gpu.available = available;
    if (!available) gpu.unavailable_reason = "no CUDA driver";
    r.devices.push_back(gpu);
    EntryResult e = r.entries[0];
    e.device = "cuda";
    r.entries.push_back(e);
    return r;
  };
  const GateReport report = gate_results(with_gpu(false), with_gpu(true), {});
  EXPECT_TRUE(report.regressions.empty());
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(
      report.notes.back().find("Baseline entries on cuda (NVIDIA H100 on host-a) were not compared: the device was "
                               "not available for these results (no CUDA driver)."),
      std::string::npos)
      << report.notes.back();
}

}  // namespace
}  // namespace harness
