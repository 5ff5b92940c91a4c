// Sample statistics: quantiles and the summary of timings.
#include <gtest/gtest.h>

#include "harness/core/stats.h"

namespace harness {
namespace {

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
