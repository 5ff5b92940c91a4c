// The run of a plan (harness/runner/runner.cpp): untimed cases of different
// entries side by side, every timed case alone, and the results in the
// plan's order whatever order the cases finished in.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "harness/core/clock.h"
#include "harness/device/device_info.h"
#include "harness/runner/runner.h"
#include "harness/runner/speed_of_light.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::cpu_devices;
using testing::project_catalog;

struct CaseSpan {
  std::string entry;
  std::string id;
  Suite suite;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// The runner calls its observer under its own lock: no lock needed here.
class SpanRecorder : public RunObserver {
 public:
  void case_started(const PlannedEntry& entry, const CaseSpec& spec) override {
    spans.push_back(CaseSpan{entry.submission.name, spec.id, spec.suite, monotonic_ns(), 0});
  }
  void case_finished(const PlannedEntry& entry, const CaseResult& result) override {
    for (CaseSpan& s : spans) {
      if (s.entry == entry.submission.name && s.id == result.id) s.end_ns = monotonic_ns();
    }
  }
  std::vector<CaseSpan> spans;
};

bool overlap(const CaseSpan& a, const CaseSpan& b) { return a.start_ns < b.end_ns && b.start_ns < a.end_ns; }

TEST(PlanLanes, UntimedCasesOfEntriesOverlapTimedOnesRunAloneResultsStayInPlanOrder) {
  RunSelection selection;
  selection.device = "cpu";
  selection.challenges = {"softmax_topk"};
  selection.submissions = {"cpu-fast", "cpu-naive", "numpy"};
  selection.case_ids = {"correctness.normal.r64.v1024.k1", "perf.normal.r256.v131072.k8",
                        "correctness.normal.r16.v32000.k1", "correctness.normal.r8.v50257.k1",
                        "correctness.normal.r64.v1024.k2"};
  const RunPlan plan = make_plan(selection, project_catalog(), cpu_devices());
  ASSERT_EQ(plan.entries.size(), 3u);
  RunSettings settings;
  settings.seed = 20261127;
  settings.timing.min_samples = 5;
  settings.timing.min_ms = 20;
  settings.timing.max_ms = 200;
  RunResults results;
  SpanRecorder recorder;
  SpeedOfLight speed_of_light([](const DeviceInfo& d) { return measure_peak(d, true); }, {});
  execute_plan(
      plan, settings, results, recorder, [](const RunResults&) {}, speed_of_light);

  // Each entry in plan order, each of its cases in its own order.
  ASSERT_EQ(results.entries.size(), plan.entries.size());
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    EXPECT_EQ(results.entries[e].submission.name, plan.entries[e].submission.name);
    ASSERT_EQ(results.entries[e].cases.size(), plan.entries[e].cases.size());
    for (size_t c = 0; c < plan.entries[e].cases.size(); ++c) {
      EXPECT_EQ(results.entries[e].cases[c].id, plan.entries[e].cases[c].id);
      EXPECT_EQ(results.entries[e].cases[c].verdict, Verdict::pass) << results.entries[e].cases[c].message;
    }
  }
  ASSERT_EQ(recorder.spans.size(), 15u);

  // No case runs beside a timed one.
  for (const CaseSpan& timed : recorder.spans) {
    if (timed.suite != Suite::perf) continue;
    for (const CaseSpan& other : recorder.spans) {
      if (&other == &timed) continue;
      EXPECT_FALSE(overlap(timed, other))
          << timed.entry << " " << timed.id << " ran beside " << other.entry << " " << other.id;
    }
  }
  // Every timed case after every untimed one.
  int64_t last_untimed_end = 0;
  int64_t first_timed_start = INT64_MAX;
  for (const CaseSpan& s : recorder.spans) {
    if (s.suite == Suite::perf) first_timed_start = std::min(first_timed_start, s.start_ns);
    if (s.suite != Suite::perf) last_untimed_end = std::max(last_untimed_end, s.end_ns);
  }
  EXPECT_LT(last_untimed_end, first_timed_start);

  // With two cores or more, untimed cases of different entries overlap.
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: the untimed cases ran one after another";
  bool side_by_side = false;
  for (const CaseSpan& a : recorder.spans) {
    for (const CaseSpan& b : recorder.spans) {
      side_by_side =
          side_by_side || (a.entry != b.entry && a.suite != Suite::perf && b.suite != Suite::perf && overlap(a, b));
    }
  }
  EXPECT_TRUE(side_by_side) << "no two entries' untimed cases ran at once";
}

}  // namespace
}  // namespace harness
