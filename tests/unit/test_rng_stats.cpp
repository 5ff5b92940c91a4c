#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "harness/core/rng.h"
#include "harness/core/stats.h"

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

TEST(Stats, QuantilesInterpolateBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7.0);
}

TEST(Stats, SummaryOfKnownSamples) {
  const SampleSummary s = summarize({10, 12, 11, 13, 100});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.median, 12.0);
  EXPECT_DOUBLE_EQ(s.min, 10.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);
  EXPECT_DOUBLE_EQ(s.mean, 29.2);
  EXPECT_NEAR(s.p10, 10.4, 1e-12);
  EXPECT_NEAR(s.p90, 65.2, 1e-12);  // position 0.9*4 = 3.6: 13 + 0.6*(100 - 13)
  EXPECT_NEAR(s.relative_spread, (65.2 - 10.4) / 12.0, 1e-12);
  EXPECT_EQ(summarize({}).count, 0u);
}

}  // namespace
}  // namespace harness
