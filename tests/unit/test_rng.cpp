// The seeded RNG: the same seed gives the same sequence on every machine,
// and derived seeds depend on every part.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "harness/core/rng.h"

namespace harness {
namespace {

TEST(Rng, SameSeedSameSequenceOtherSeedOtherSequence) {
  Rng a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, c.next_u64());
  }
}

TEST(Rng, DerivedSeedsDependOnEveryPart) {
  EXPECT_EQ(derive_seed(1, "softmax_topk/correctness.a"), derive_seed(1, "softmax_topk/correctness.a"));
  EXPECT_NE(derive_seed(1, "softmax_topk/correctness.a"), derive_seed(2, "softmax_topk/correctness.a"));
  EXPECT_NE(derive_seed(1, "softmax_topk/correctness.a"), derive_seed(1, "softmax_topk/correctness.b"));
  EXPECT_NE(derive_seed(1, uint64_t{0}), derive_seed(1, uint64_t{1}));
}

TEST(Rng, NormalsHaveTheRightMoments) {
  Rng rng(42);
  const int n = 200000;
  double sum = 0, squares = 0;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal(3.0, 2.0);
    sum += x;
    squares += x * x;
  }
  const double mean = sum / n;
  const double variance = squares / n - mean * mean;
  // Standard errors: 2/sqrt(n) ~ 0.0045 for the mean, ~0.025 for the variance.
  EXPECT_NEAR(mean, 3.0, 0.03);
  EXPECT_NEAR(variance, 4.0, 0.1);
}

// The whole distribution, not only its moments: the Kolmogorov-Smirnov
// distance to the normal CDF, and the share beyond the ziggurat's base layer
// (x > 3.654, drawn by the tail's own method) on each side, and the share
// just inside it. A wrong layer
// table or wedge test moves either far past these bounds.
TEST(Rng, NormalsFollowTheNormalDistributionIntoTheTails) {
  Rng rng(2026);
  const size_t n = 1000000;
  std::vector<double> xs(n);
  for (double& x : xs) x = rng.normal();
  std::sort(xs.begin(), xs.end());
  double distance = 0;
  for (size_t i = 0; i < n; ++i) {
    const double cdf = 0.5 * std::erfc(-xs[i] / std::sqrt(2.0));
    distance = std::max(
        {distance, std::fabs(cdf - static_cast<double>(i) / n), std::fabs(cdf - static_cast<double>(i + 1) / n)});
  }
  // 1.95/sqrt(n): the 0.1% critical value of the KS distance.
  EXPECT_LT(distance, 1.95 / std::sqrt(static_cast<double>(n)));
  const double beyond = 0.5 * std::erfc(3.6541528853610088 / std::sqrt(2.0)) * n;  // ~129 each side
  const auto below = static_cast<double>(std::lower_bound(xs.begin(), xs.end(), -3.6541528853610088) - xs.begin());
  const auto above = static_cast<double>(xs.end() - std::upper_bound(xs.begin(), xs.end(), 3.6541528853610088));
  // Five standard deviations of a Poisson count.
  EXPECT_NEAR(below, beyond, 5 * std::sqrt(beyond));
  EXPECT_NEAR(above, beyond, 5 * std::sqrt(beyond));
  // Between 3 and R the top layers' wedges decide: accepting every wedge
  // point puts ~16% too many there (2836 for 2442 in a million, 8 standard
  // deviations), though the KS distance moves by only 5e-4.
  const auto band = [&](double lo, double hi) {
    return static_cast<double>(std::lower_bound(xs.begin(), xs.end(), hi) - std::lower_bound(xs.begin(), xs.end(), lo));
  };
  const double in_band = band(-3.6541528853610088, -3.0) + band(3.0, 3.6541528853610088);
  const double expected_band = (std::erfc(3.0 / std::sqrt(2.0)) - std::erfc(3.6541528853610088 / std::sqrt(2.0))) * n;
  EXPECT_NEAR(in_band, expected_band, 5 * std::sqrt(expected_band));
  EXPECT_GT(xs.back(), 4.0);
  EXPECT_LT(xs.front(), -4.0);
}

TEST(Rng, BelowStaysInRangeAndReachesEveryValue) {
  Rng rng(1);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t v = rng.below(5);
    ASSERT_LT(v, 5u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 5u);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform(-2.0, 3.0);
    ASSERT_GE(u, -2.0);
    ASSERT_LT(u, 3.0);
  }
}

}  // namespace
}  // namespace harness
