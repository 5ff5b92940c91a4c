// `harness gate`: did anything regress against a baseline? A case that passed
// and now fails or is missing, a score that dropped beyond a threshold
// (performance aside: it moves with timing noise), or a case slower beyond the
// threshold and beyond measured noise (a one-sided Mann-Whitney test). Timings
// compare only between runs on the same machine; across machines verdicts and
// scores are gated, and the report says so.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

struct GateOptions {
  double max_slowdown_percent = 10;  // slower than this (and significant) is a regression
  double max_score_drop = 1.0;       // points of a score
  double alpha = 0.01;               // significance of the rank test
  size_t min_samples = 5;            // fewer timing samples on either side: not compared
  bool compare_timings = true;       // false: verdicts and scores only, whatever the machine
  bool allow_incomplete = false;     // an interrupted run (complete: false) is not itself a regression
};

struct GateFinding {
  std::string what;   // "newly failing", "missing", "score drop", "slower", "now passing", "faster", "score gain"
  std::string where;  // "softmax_topk / cpu-fast on cpu"
  std::string case_id;
  std::string detail;
  std::string reproduce;
};

struct GateReport {
  std::vector<GateFinding> regressions;
  std::vector<GateFinding> improvements;
  std::vector<std::string> notes;
  size_t cases_compared = 0;
  size_t timings_compared = 0;
  // Compared timings the baseline took while others held more than a
  // quarter of its machine's cores: a slowdown there may not show.
  size_t busy_baseline_timings = 0;
};

// Throws UsageError when nothing in the two files can be compared (other
// challenges, other devices).
GateReport gate_results(const RunResults& current, const RunResults& baseline, const GateOptions& options);

// Markdown fit for a pull-request comment: regressions first.
std::string render_gate_markdown(const GateReport& report, const GateOptions& options);

}  // namespace harness
