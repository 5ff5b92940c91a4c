// The head-to-head Markdown report: a summary across challenges; per
// challenge and device the scores side by side, the winner and its margin,
// and each dimension's evidence (failing cases, stability errors, bandwidth
// tables and charts); the mutants' verdicts; each run's environment; how to
// reproduce. Every figure comes from the results.
#pragma once

#include <string>

#include "harness/report/report_input.h"
#include "harness/results/results.h"

namespace harness {

std::string render_markdown(const ReportInput& input);
// One run (what `run` and `selftest` write).
std::string render_markdown(const RunResults& results);

}  // namespace harness
