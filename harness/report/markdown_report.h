// The head-to-head Markdown report: a summary across challenges; then per
// challenge and device, the scores side by side with the winner and its
// margin, and the evidence of every dimension (failing cases with their
// errors and reproduce commands, the stability errors, a bandwidth table and
// charts GitHub draws); the mutant catalogue's verdicts; the environment of
// every run; how to reproduce. Every figure comes from the results.
#pragma once

#include <string>

#include "harness/report/report_input.h"
#include "harness/results/results.h"

namespace harness {

std::string render_markdown(const ReportInput& input);
// One run (what `run` and `selftest` write).
std::string render_markdown(const RunResults& results);

}  // namespace harness
