// The float64 reference against values computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "softmax_topk/softmax_topk_reference.h"

namespace {

TEST(SoftmaxTopkReference, ThreeLogitsByHand) {
  // softmax(1, 2, 3) = e^i / (e + e^2 + e^3)
  const float logits[] = {1, 3, 2};
  double probs[2];
  int32_t indices[2];
  reference::softmax_topk(logits, 1, 3, 2, probs, indices);
  const double denominator = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_EQ(indices[0], 1);
  EXPECT_EQ(indices[1], 2);
  EXPECT_NEAR(probs[0], std::exp(3.0) / denominator, 1e-15);  // 0.66524095...
  EXPECT_NEAR(probs[1], std::exp(2.0) / denominator, 1e-15);  // 0.24472847...
  EXPECT_NEAR(probs[0], 0.6652409557748219, 1e-15);
}

TEST(SoftmaxTopkReference, TiesGoToTheLowerColumnAndRowsAreIndependent) {
  const float logits[] = {5, 7, 7, 1,   // row 0: a tie for first place
                          0, 0, 0, 0};  // row 1: all equal, each 1/4
  double probs[4];
  int32_t indices[4];
  reference::softmax_topk(logits, 2, 4, 2, probs, indices);
  EXPECT_EQ(indices[0], 1);
  EXPECT_EQ(indices[1], 2);
  EXPECT_DOUBLE_EQ(probs[0], probs[1]);
  EXPECT_EQ(indices[2], 0);
  EXPECT_EQ(indices[3], 1);
  EXPECT_DOUBLE_EQ(probs[2], 0.25);
}

TEST(SoftmaxTopkReference, LargeLogitsDoNotOverflow) {
  const float logits[] = {1e4f, 1e4f - 1, -1e4f};
  EXPECT_NEAR(reference::log_sum_exp(logits, 3), 1e4 + std::log(1 + std::exp(-1.0)), 1e-9);
  double probs[1];
  int32_t indices[1];
  reference::softmax_topk(logits, 1, 3, 1, probs, indices);
  // x - lse cancels two numbers near 1e4: ~1e4 * 2^-53 = 1e-12 of absolute
  // error in the exponent, still eight orders below the checker's 1e-4.
  EXPECT_NEAR(probs[0], 1 / (1 + std::exp(-1.0)), 1e-11);
}

TEST(SoftmaxTopkReference, MaskedEntriesHaveProbabilityZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const float logits[] = {-inf, 0.0f, -inf, std::log(3.0f)};
  double probs[3];
  int32_t indices[3];
  reference::softmax_topk(logits, 1, 4, 3, probs, indices);
  EXPECT_EQ(indices[0], 3);
  EXPECT_EQ(indices[1], 1);
  EXPECT_NEAR(probs[0], 0.75, 1e-7);
  EXPECT_NEAR(probs[1], 0.25, 1e-7);
  EXPECT_EQ(probs[2], 0.0);
  EXPECT_EQ(indices[2], 0);  // the lower of the two masked columns
}

}  // namespace
