// Scores: each dimension 0-100 from measured cases, the overall as the
// weighted mean of the measured dimensions (weights from the challenge's
// challenge.json), a letter grade, and the cap that keeps any submission
// failing a core correctness case at C or below.
#pragma once

#include <string>

#include "harness/results/results.h"

namespace harness {

// A+ >= 97, A >= 93, A- >= 90, B+ >= 87, B >= 83, B- >= 80, C+ >= 77,
// C >= 73, C- >= 70, D >= 60, else F.
std::string grade_for(double overall);

// The highest overall a submission that fails a core case can get (a C).
inline constexpr double kFailedCoreCap = 76.9;

// Scores every entry; the naive baseline of the same challenge and device
// (role "baseline") is the reference for speedups. An entry none of whose
// cases was judged (all unavailable) gets no scores.
void score_results(RunResults& results);

Scores score_entry(const EntryResult& entry, const EntryResult* baseline);

}  // namespace harness
