// JUnit XML: each (challenge, submission, device) a test suite, each case a
// test case; failing verdicts are failures, unsupported cases are skipped,
// harness errors are errors.
#pragma once

#include <string>

#include "harness/results/results.h"

namespace harness {

std::string render_junit(const RunResults& results);

}  // namespace harness
