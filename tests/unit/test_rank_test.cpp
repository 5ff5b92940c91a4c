// The one-sided rank test (Mann-Whitney U) by which the gate judges timings.
#include <gtest/gtest.h>

#include "harness/compare/rank_test.h"
#include "synthetic_results.h"

namespace harness {
namespace {

using testing::around;

TEST(RankTest, SeparatedSamplesAreSignificantIdenticalOnesAreNot) {
  const auto slow = mann_whitney_greater({11, 12, 13, 14, 15}, {1, 2, 3, 4, 5});
  EXPECT_LT(slow.p_value, 0.01);
  EXPECT_DOUBLE_EQ(slow.u, 25.0);
  EXPECT_GT(mann_whitney_greater({1, 2, 3, 4, 5}, {11, 12, 13, 14, 15}).p_value, 0.99);
  EXPECT_DOUBLE_EQ(mann_whitney_greater({5, 5, 5}, {5, 5, 5}).p_value, 1.0);
  EXPECT_GT(mann_whitney_greater(around(100), around(100)).p_value, 0.3);
  EXPECT_DOUBLE_EQ(mann_whitney_greater({1}, {2, 3}).p_value, 1.0) << "a single sample is never evidence";
}

}  // namespace
}  // namespace harness
