// The seeded RNG: the same seed gives the same sequence on every machine,
// and derived seeds depend on every part.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

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
