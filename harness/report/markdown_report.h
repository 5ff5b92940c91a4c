// The head-to-head Markdown report: per challenge and device, a summary of
// scores with the winner and its margin, the evidence for each dimension
// (failing cases with their errors and reproduce commands, a bandwidth table
// and chart), the mutant catalogue's verdicts, the environment, and how to
// reproduce the run. Every figure comes from the results.
#pragma once

#include <string>

#include "harness/results/results.h"

namespace harness {

std::string render_markdown(const RunResults& results);

}  // namespace harness
