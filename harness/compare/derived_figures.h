// Stored results re-derived, not trusted: what a results file's own
// evidence determines (each entry's scores from its cases and the
// challenge's weights; that a passing case's errors are within their
// tolerances) must be what it stores. `report`, `gate` and `merge` refuse
// a file that disagrees with itself: an edited verdict or score.
#pragma once

#include <string>

#include "harness/results/results.h"

namespace harness {

// Throws UsageError naming the file, the entry and the figure (or the
// case) where a stored figure disagrees with the evidence beside it.
// Entries of a challenge this build does not know are left as they are.
void check_derived_figures(const RunResults& results, const std::string& origin);

}  // namespace harness
