// The report's performance table: a case that counts its arithmetic (the
// `flops` metric, as attention's do) shows its FLOP/s beside its bandwidth;
// one that does not shows none. The summary's sentence per entry names its
// best arithmetic rate where its cases count it, else its best bandwidth.
#include <gtest/gtest.h>

#include "harness/report/markdown_report.h"
#include "harness/scoring/scoring.h"
#include "support/test_support.h"

namespace harness {
namespace {

EntryResult perf_entry(const std::string& name, const std::string& device, double median_ns) {
  CaseResult c;
  c.id = "perf.forward.prefill";
  c.suite = Suite::perf;
  c.verdict = Verdict::pass;
  TimingResult t;
  t.samples_ns = {median_ns, median_ns, median_ns};
  t.summary = summarize(t.samples_ns);
  c.timing = t;
  c.bandwidth = 1e12;
  return testing::entry_with_case("attention", name, device, c);
}

std::string performance_section(const RunResults& r) {
  return testing::markdown_sections(render_markdown(r), "#### Performance");
}

TEST(PerfReport, ACaseThatCountsItsArithmeticShowsItsFlopRate) {
  RunResults r;
  r.run.complete = true;
  r.entries.push_back(perf_entry("cuda-fast", "cuda:0", 2.5e6));
  r.entries[0].cases[0].metrics["flops"] = 1.1e11;  // 110 GFLOP in 2.5 ms
  r.entries.push_back(perf_entry("cpu-fast", "cpu", 0.5e9));
  r.entries[1].cases[0].metrics["flops"] = 4.0e10;  // 40 GFLOP in 0.5 s
  score_results(r);
  const std::string section = performance_section(r);
  EXPECT_NE(section.find("<br>44.0 TFLOP/s <br>"), std::string::npos) << section;
  EXPECT_NE(section.find("<br>80.0 GFLOP/s <br>"), std::string::npos) << section;
  EXPECT_NE(render_markdown(r).find("FLOP/s, where a challenge counts its arithmetic"), std::string::npos);
}

TEST(PerfReport, ACaseWithoutACountShowsNoFlopRate) {
  RunResults r;
  r.run.complete = true;
  r.entries.push_back(perf_entry("cuda-fast", "cuda:0", 2.5e6));
  score_results(r);
  const std::string section = performance_section(r);
  ASSERT_NE(section.find("| `perf.forward.prefill` |"), std::string::npos) << section;
  EXPECT_EQ(section.find(" TFLOP/s"), std::string::npos) << section;
  EXPECT_EQ(section.find(" GFLOP/s"), std::string::npos) << section;
}

// attention's summary said "its best bandwidth is 2.4 GB/s ..., 7.7% of its
// roofline" of cpu-fast, a compute-bound kernel at 80% of the machine's FMA
// peak: a figure that says nothing of its speed, and reads as slow.
TEST(PerfReport, TheSummaryNamesTheBestFlopRateWhereCasesCountTheirArithmetic) {
  RunResults r;
  r.run.complete = true;
  r.entries.push_back(perf_entry("cpu-fast", "cpu", 0.5e9));
  r.entries[0].cases[0].metrics["flops"] = 4.0e10;  // 40 GFLOP in 0.5 s
  r.entries[0].cases[0].peak_fraction = 0.05;
  r.entries.push_back(perf_entry("cpu-naive", "cpu", 2.0e9));
  r.entries[1].submission.role = "baseline";
  r.entries[1].cases[0].metrics["flops"] = 4.0e10;
  score_results(r);
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("its best rate is 80.0 GFLOP/s on `perf.forward.prefill`, 4.0x the naive baseline."),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("its best bandwidth"), std::string::npos) << md;

  RunResults bandwidth_only;
  bandwidth_only.run.complete = true;
  bandwidth_only.entries.push_back(perf_entry("cuda-fast", "cuda:0", 2.5e6));
  bandwidth_only.entries[0].cases[0].peak_fraction = 0.5;
  score_results(bandwidth_only);
  EXPECT_NE(render_markdown(bandwidth_only).find("its best bandwidth is"), std::string::npos);
}

}  // namespace
}  // namespace harness
