// The Mann-Whitney U test: is one set of timing samples stochastically
// larger than another? Used by `gate` so that a slowdown is reported only
// when it is beyond noise, never on the strength of a single sample.
#pragma once

#include <vector>

namespace harness {

struct RankTest {
  double u = 0;        // U statistic of `slower` (large when it is slower)
  double z = 0;        // normal approximation, tie- and continuity-corrected
  double p_value = 1;  // one-sided: P(seeing this if the two come from one distribution)
};

// One-sided test of "samples of `candidate` tend to be larger than those of
// `baseline`". Both need at least two samples (else p_value = 1).
RankTest mann_whitney_greater(const std::vector<double>& candidate, const std::vector<double>& baseline);

}  // namespace harness
