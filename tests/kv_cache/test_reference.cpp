// The kv_cache float64 reference against attention computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "kv_cache/attention_reference.h"

namespace {

TEST(KvReference, TwoTokensByHand) {
  // One head of size 1: keys 1 and 0, values 10 and 20.
  const float keys[] = {1, 0}, values[] = {10, 20};
  // Both tokens as queries (a prefill of 2), q = 1 each: query 0 sees token 0
  // only; query 1 sees both, with weights e/(e+1) and 1/(e+1).
  const float queries[] = {1, 1};
  double out[2];
  reference::causal_attention(keys, values, 2, queries, 2, 1, 1, 1, out);
  EXPECT_DOUBLE_EQ(out[0], 10.0);
  const double e = std::exp(1.0);
  EXPECT_NEAR(out[1], (10 * e + 20) / (e + 1), 1e-12);
}

TEST(KvReference, ScalingAndGroupedHeads) {
  // head_dim 4: scores are divided by 2. Two query heads share kv head 0.
  const float keys[] = {1, 1, 1, 1, /*token 1*/ 0, 0, 0, 0};
  const float values[] = {1, 2, 3, 4, /*token 1*/ 5, 6, 7, 8};
  const float query[] = {1, 1, 1, 1, /*head 1*/ 0, 0, 0, 0};
  double out[8];
  reference::causal_attention(keys, values, 2, query, 1, 2, 1, 4, out);
  const double w0 = std::exp(2.0) / (std::exp(2.0) + 1);  // q.k = 4, / sqrt(4) = 2
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(out[j], w0 * (1 + j) + (1 - w0) * (5 + j), 1e-12);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(out[4 + j], 0.5 * (1 + j) + 0.5 * (5 + j), 1e-12);  // equal scores
}

TEST(KvReference, LargeScoresDoNotOverflow) {
  const float keys[] = {100, 99}, values[] = {1, 2}, query[] = {10};
  double out[1];
  reference::causal_attention(keys, values, 2, query, 1, 1, 1, 1, out);  // scores 1000 and 990
  EXPECT_NEAR(out[0], (1 + 2 * std::exp(-10.0)) / (1 + std::exp(-10.0)), 1e-12);
}

TEST(KvReference, EachKvHeadReadsItsOwnSliceOfEveryToken) {
  // Two kv heads of size 1, one query head each: token t holds (k, v) of
  // head 0 then head 1. Head 0 scores 0 and 0 (equal weights); head 1
  // scores 0 and 2.
  const float keys[] = {0, 0, /*token 1*/ 0, 2}, values[] = {1, 3, /*token 1*/ 5, 7};
  const float query[] = {1, 1};
  double out[2];
  reference::causal_attention(keys, values, 2, query, 1, 2, 2, 1, out);
  EXPECT_NEAR(out[0], 0.5 * 1 + 0.5 * 5, 1e-12);
  const double w1 = std::exp(2.0) / (std::exp(2.0) + 1);
  EXPECT_NEAR(out[1], (1 - w1) * 3 + w1 * 7, 1e-12);
}

}  // namespace
