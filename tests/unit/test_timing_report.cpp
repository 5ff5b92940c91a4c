// The report sets each worker's claimed timing beside what the timing
// witness saw: the floor, the median request's excess over the claim, and
// a GPU worker's staged rounds beside what they may take.
#include <gtest/gtest.h>

#include <limits>

#include "harness/report/markdown_report.h"
#include "harness/scoring/scoring.h"
#include "support/test_support.h"

namespace harness {
namespace {

EntryResult timed_entry(const std::string& name, const std::string& device, const TimingResult::Witness& witness) {
  CaseResult c;
  c.id = "perf.decode.l1.h32x8.d128.b16.t4096";
  c.suite = Suite::perf;
  c.verdict = Verdict::pass;
  TimingResult t;
  t.samples_ns = {0.27e6, 0.28e6, 0.27e6, 0.26e6, 0.27e6};
  t.summary = summarize(t.samples_ns);
  t.witness = witness;
  c.timing = t;
  c.bandwidth = 2e12;
  return testing::entry_with_case("kv_cache", name, device, c);
}

std::string timing_section(const RunResults& r) {
  return testing::markdown_sections(render_markdown(r), "#### Timing: claimed and witnessed");
}

// Staged rounds of cuda-fast's decode on an H100 (reports/gpu-h100): 75
// requests, 70.75 ms of staging, none of it counted.
TEST(TimingReport, AStagedWorkerShowsItsStagingBesideWhatItMayTake) {
  RunResults r;
  r.run.complete = true;
  TimingResult::Witness w{58.34e6, 76.5e6, 41.16e6, 150, 0, 75, true, 70.75e6, 0, 4.12e6, 0};
  r.entries.push_back(timed_entry("cuda-fast", "cuda:0", w));
  score_results(r);
  const std::string section = timing_section(r);
  EXPECT_NE(section.find("| `perf.decode.l1.h32x8.d128.b16.t4096` | cuda-fast | pass | 270.0 us | 0 ns | 0.00x | "
                         "229.1 us (1.02 ms allowed) | 943.3 us a request (4.12 ms allowed), 0 ns counted |"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("Staging: a GPU worker's uploads and downloads"), std::string::npos) << section;
  // Results from before the excess and the allowance were recorded (the
  // H100's of reports/gpu-h100) say so, rather than "unlimited".
  w.median_excess.reset();
  w.staging_allowed_ns.reset();
  r.entries[0] = timed_entry("cuda-fast", "cuda:0", w);
  EXPECT_NE(
      timing_section(r).find("| cuda-fast | pass | 270.0 us | 0 ns | - | 229.1 us (1.02 ms allowed) | "
                             "943.3 us a request (no allowance recorded)"),
      std::string::npos)
      << timing_section(r);
}

// The floor above the claimed median is what the scores use, marked so;
// a request that claimed nothing of the time seen reads as such.
TEST(TimingReport, AFloorThatRaisedTheMedianIsMarkedScored) {
  RunResults r;
  r.run.complete = true;
  TimingResult::Witness w{};
  w.floor_ns = 0.41e6;
  w.median_excess = std::numeric_limits<double>::infinity();
  r.entries.push_back(timed_entry("cpu-quick", "cpu", w));
  score_results(r);
  const std::string section = timing_section(r);
  EXPECT_NE(section.find("| cpu-quick | pass | 270.0 us | 410.0 us (scored) | claimed nothing | - |"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("Staging:"), std::string::npos) << section;
}

// What a request cost beyond its calls' claims is set beside what the
// witness allowed it: within the allowance an honest worker's cost of a
// request; far above it, time the claims left out. Staging the witness
// counted as the calls' time is not a request's own.
TEST(TimingReport, EachRequestsTimeBeyondTheClaimsIsSetBesideItsAllowance) {
  RunResults r;
  r.run.complete = true;
  TimingResult::Witness w{};
  w.request_ns = 40e6;
  w.calls_ns = 8e6;
  w.overhead_ns = 4.08e6;
  w.requests = 4;
  w.calls = 8;
  w.median_excess = 3.5;
  r.entries.push_back(timed_entry("cpu-claims-a-quarter", "cpu", w));
  w.staged = true;
  w.staging_ns = 36e6;
  w.staging_counted_ns = 12e6;
  w.staging_allowed_ns = 6e6;
  r.entries.push_back(timed_entry("cuda-hides-in-staging", "cuda:0", w));
  score_results(r);
  const std::string section = timing_section(r);
  EXPECT_NE(section.find("| cpu-claims-a-quarter | pass | 270.0 us | 0 ns | 3.50x | 8.00 ms (1.02 ms allowed) | - |"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("| cuda-hides-in-staging | pass | 270.0 us | 0 ns | 3.50x | 5.00 ms (1.02 ms allowed) | "
                         "9.00 ms a request (6.00 ms allowed), 12.00 ms counted |"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("Beyond the claims: what the clock saw of a request"), std::string::npos) << section;
}

TEST(TimingReport, WithoutWitnessedTimingsThereIsNoSection) {
  RunResults r;
  r.run.complete = true;
  EntryResult e = timed_entry("numpy", "cpu", {});
  e.cases[0].timing->witness.reset();
  r.entries.push_back(e);
  score_results(r);
  EXPECT_EQ(timing_section(r), "");
}

}  // namespace
}  // namespace harness
