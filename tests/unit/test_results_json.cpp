#include <gtest/gtest.h>

#include <limits>

#include "harness/core/error.h"
#include "harness/results/results_json.h"
#include "harness/scoring/scoring.h"

namespace harness {
namespace {

RunResults sample() {
  RunResults r;
  r.run.harness_version = "0.1.0";
  r.run.started = "2026-11-21T00:00:00Z";
  r.run.seed = 1234;
  r.run.command_line = "harness run softmax_topk";
  r.run.host.cpu_model = "test cpu";
  r.run.complete = true;
  DeviceInfo d;
  d.id = "cpu";
  d.kind = "cpu";
  d.name = "test cpu";
  d.cache_bytes = 1 << 20;
  PeakBandwidth peak;
  peak.method = "stream-copy";
  peak.copy_bytes_per_second = 10e9;
  peak.read_bytes_per_second = 12e9;
  peak.write_bytes_per_second = 7e9;
  peak.buffer_bytes = 1e8;
  peak.repetitions = 5;
  peak.threads = 2;
  peak.quick = true;
  peak.measured_at = "2026-11-25T01:02:03Z";
  peak.cached_from = "/home/u/.cache/kernel-harness/peaks.json";
  d.peak = peak;
  r.devices.push_back(d);
  EntryResult e;
  e.challenge = "softmax_topk";
  e.device = "cpu";
  e.submission.name = "cpu-mutant-x";
  e.submission.challenge = "softmax_topk";
  e.submission.device = "cpu";
  e.submission.role = "mutant";
  e.submission.expect = Expectation{Suite::edge, Verdict::timeout, false, {"edge.a"}};
  CaseResult c;
  c.id = "perf.normal.r1.v2.k1";
  c.suite = Suite::perf;
  c.params = {{"rows", 1}};
  c.seed = 987654321;
  c.verdict = Verdict::pass;
  c.metrics = {{"probs_max_rel_error", 1e-7}};
  TimingResult t;
  t.clock = "cpu-monotonic";
  t.samples_ns = {1, 2, 3};
  t.summary = summarize(t.samples_ns);
  t.sets = 2;
  t.witness = TimingResult::Witness{10e6, 1e6, 8e6, 4, 1.5e6, 2, true, 3e6, 0.5e6, 2.5e6, 1.25};
  t.machine_load = TimingResult::MachineLoad{1.25, 0.75, 0.5, 2};
  c.timing = t;
  c.bandwidth = 5e9;
  c.peak_fraction = 0.5;
  c.reproduce = "harness run softmax_topk --case perf.normal.r1.v2.k1 --seed 1234";
  e.cases.push_back(c);
  r.entries.push_back(e);
  score_results(r);
  return r;
}

TEST(ResultsJson, RoundTripsEveryField) {
  const RunResults original = sample();
  const nlohmann::json first = to_json(original);
  EXPECT_EQ(first["schema"], "harness.results/v1");
  const RunResults back = results_from_json(first, "memory");
  EXPECT_EQ(to_json(back), first);
  EXPECT_EQ(back.entries[0].submission.expect->verdict, Verdict::timeout);
  EXPECT_DOUBLE_EQ(back.entries[0].cases[0].timing->summary.median, 2.0);
  EXPECT_EQ(back.entries[0].cases[0].timing->witness->requests, 2u);
  EXPECT_TRUE(back.entries[0].cases[0].timing->witness->staged);
  EXPECT_EQ(back.entries[0].cases[0].timing->witness->staging_ns, 3e6);
  EXPECT_EQ(back.entries[0].cases[0].timing->witness->staging_counted_ns, 0.5e6);
  EXPECT_EQ(back.entries[0].cases[0].timing->witness->staging_allowed_ns, 2.5e6);
  EXPECT_EQ(back.entries[0].cases[0].timing->witness->median_excess, 1.25);
  EXPECT_EQ(back.entries[0].cases[0].timing->machine_load->other_cores, 1.25);
  EXPECT_EQ(back.entries[0].cases[0].timing->machine_load->ours_cores, 0.75);
  EXPECT_EQ(back.entries[0].cases[0].timing->machine_load->seconds, 0.5);
  EXPECT_EQ(back.entries[0].cases[0].timing->machine_load->cores, 2);
  // Results from before the machine's load was recorded read back without it.
  nlohmann::json unloaded = first;
  unloaded["results"][0]["cases"][0]["timing"].erase("machine_load");
  EXPECT_FALSE(results_from_json(unloaded, "memory").entries[0].cases[0].timing->machine_load);
  // A claim of nothing beside time seen: an infinite excess, written finite.
  CaseResult claimed_nothing = back.entries[0].cases[0];
  claimed_nothing.timing->witness->median_excess = std::numeric_limits<double>::infinity();
  EXPECT_EQ(to_json(claimed_nothing)["timing"]["witness"]["median_excess"], 1e300);
  // Results from before it was recorded have none, and read back as none.
  nlohmann::json older = first;
  older["results"][0]["cases"][0]["timing"]["witness"].erase("median_excess");
  EXPECT_FALSE(results_from_json(older, "memory").entries[0].cases[0].timing->witness->median_excess);
  // None (the judgement switched off) is left out, and read back as none.
  CaseResult unlimited = back.entries[0].cases[0];
  unlimited.timing->witness->staging_allowed_ns.reset();
  const nlohmann::json written = to_json(unlimited);
  EXPECT_FALSE(written["timing"]["witness"].contains("staging_allowed_ns"));
  nlohmann::json without = first;
  without["results"][0]["cases"][0]["timing"]["witness"].erase("staging_allowed_ns");
  EXPECT_FALSE(results_from_json(without, "memory").entries[0].cases[0].timing->witness->staging_allowed_ns);
}

TEST(ResultsJson, UnusableInputIsAUsageErrorThatNamesTheProblem) {
  auto message_of = [](const nlohmann::json& j) {
    try {
      results_from_json(j, "x.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message_of(nlohmann::json::array()).find("not a results file"), std::string::npos);
  nlohmann::json other = to_json(sample());
  other["schema"] = "harness.results/v0";
  EXPECT_NE(message_of(other).find("schema 'harness.results/v0'"), std::string::npos);
  nlohmann::json broken = to_json(sample());
  broken["results"][0]["cases"][0]["verdict"] = "fine";
  EXPECT_NE(message_of(broken).find("unknown verdict 'fine'"), std::string::npos);
  broken = to_json(sample());
  broken["run"].erase("seed");
  EXPECT_NE(message_of(broken).find("x.json: malformed results"), std::string::npos);
}

}  // namespace
}  // namespace harness
