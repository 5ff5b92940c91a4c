// The tensor-core forward's warp-level bookkeeping, played on the CPU
// (kernels/attention/cuda/mma_tf32_layout.h): every element of an mma
// fragment has one lane and register; a C tile read back as an A operand
// through the lanes the kernel shuffles from is the same matrix; and the
// 3xTF32 split (integer rounding to TF32, in its exact and fast forms) keeps
// products within 5 * 2^-22 of their size, with infinities, NaNs and
// FLT_MAX kept in their class.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include "attention/cuda/mma_tf32_layout.h"

namespace attention::cuda::mma {
namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float tf32(float x) { return from_bits(round_to_tf32_bits(bits_of(x))); }

TEST(MmaLayout, EveryElementOfEachFragmentHasOneLaneAndRegister) {
  std::set<std::pair<int, int>> a, b, c;
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r) {
      EXPECT_TRUE(a.insert({a_row(lane, r), a_col(lane, r)}).second);
      EXPECT_TRUE(c.insert({c_row(lane, r), c_col(lane, r)}).second);
    }
    for (int r = 0; r < 2; ++r) EXPECT_TRUE(b.insert({b_row(lane, r), b_col(lane)}).second);
  }
  ASSERT_EQ(a.size(), 16u * 8);
  ASSERT_EQ(b.size(), 8u * 8);
  ASSERT_EQ(c.size(), 16u * 8);
  EXPECT_EQ(*a.rbegin(), std::make_pair(15, 7));
  EXPECT_EQ(*b.rbegin(), std::make_pair(7, 7));
  EXPECT_EQ(*c.rbegin(), std::make_pair(15, 7));
}

// The kernel's c_as_a: each lane takes both candidates of its pair from the
// source lane (every lane offers the same two registers) and keeps one.
TEST(MmaLayout, ACTileReadAsAnAOperandThroughTheShuffledLanesIsTheSameMatrix) {
  float matrix[16][8];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) matrix[i][j] = static_cast<float>(100 * i + j);
  float c[32][4];
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < 4; ++r) c[lane][r] = matrix[c_row(lane, r)][c_col(lane, r)];
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r) {
      const int source = c_source_lane(lane, r);
      ASSERT_EQ(source / 4, lane / 4) << "a shuffle within the group";
      ASSERT_EQ(c_source_register(lane, r) / 2, r % 2) << "the pair every lane offers for register " << r;
      const float even = c[source][2 * (r % 2)];
      const float odd = c[source][2 * (r % 2) + 1];
      const float got = c_source_register(lane, r) % 2 ? odd : even;
      EXPECT_EQ(got, matrix[a_row(lane, r)][a_col(lane, r)]) << "lane " << lane << ", register " << r;
    }
  }
}

TEST(MmaLayout, RoundingToTf32IsToNearestAndKeepsEachClassOfValue) {
  EXPECT_EQ(tf32(1.0f), 1.0f);
  EXPECT_EQ(tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f);  // a tie goes away from zero
  EXPECT_EQ(tf32(1.0f + 0x1p-12f), 1.0f);
  EXPECT_EQ(tf32(-1.0f - 0x1p-11f - 0x1p-20f), -1.0f - 0x1p-10f);
  EXPECT_EQ(bits_of(tf32(-0.0f)), bits_of(-0.0f));
  EXPECT_EQ(tf32(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(tf32(-std::numeric_limits<float>::infinity()), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(from_bits(round_to_tf32_bits(0x7f800001u))));  // a NaN whose payload lies in the dropped bits
  EXPECT_TRUE(std::isfinite(tf32(FLT_MAX)));
  EXPECT_LE(std::fabs(tf32(FLT_MAX) - FLT_MAX), 0x1p-10f * FLT_MAX);
  EXPECT_EQ(tf32(FLT_MIN * 0.5f), FLT_MIN * 0.5f);  // a subnormal with few bits is exact

  // Over many values: within half a TF32 step, and the remainder exact.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-100, 100);
  for (int n = 0; n < 100000; ++n) {
    const float x = std::ldexp(mantissa(rng), exponent(rng)) * (n % 2 ? -1.0f : 1.0f);
    const float hi = tf32(x);
    const double step = std::ldexp(1.0, std::ilogb(x) - 10);
    ASSERT_LE(std::fabs(static_cast<double>(x) - hi), step / 2) << x;
    ASSERT_EQ(static_cast<double>(x) - hi, static_cast<double>(x - hi)) << x;  // x - hi has no rounding
  }
}

// The kernels round with round_to_tf32_bits_fast: the exact form's bits for
// every value except signalling NaNs, which stay NaNs or become infinities.
TEST(MmaLayout, TheFastRoundingGivesTheExactRoundingsBitsForEveryValueButSignallingNans) {
  const auto expect_same = [](uint32_t bits) {
    const uint32_t fast = round_to_tf32_bits_fast(from_bits(bits), bits), exact = round_to_tf32_bits(bits);
    const bool signalling_nan = (bits & 0x7fffffffu) > 0x7f800000u && (bits & 0x00400000u) == 0;
    if (signalling_nan) {
      ASSERT_FALSE(std::isfinite(from_bits(fast))) << std::hex << bits;
    } else {
      ASSERT_EQ(fast, exact) << std::hex << bits;
    }
  };
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093) expect_same(static_cast<uint32_t>(bits));
  for (uint32_t sign : {0u, 0x80000000u}) {
    // Around FLT_MAX and the infinity, zero and the subnormals.
    for (uint32_t m = 0x7f7fd000u; m <= 0x7f802000u; ++m) expect_same(sign | m);
    for (uint32_t m = 0; m <= 0x3000u; ++m) expect_same(sign | m);
    // Every exponent's ties and their neighbours.
    for (uint32_t e = 0; e < 256; ++e) {
      for (uint32_t low : {0x0fffu, 0x1000u, 0x1001u, 0x1fffu, 0x2fffu, 0x3000u, 0x7fffffu})
        expect_same(sign | e << 23 | (low & 0x7fffffu));
    }
  }
}

// The kernels' product of two floats by three TF32 products: hi rounded,
// lo = x - hi passed whole and read to TF32 by the tensor core (its top 19
// bits, truncated), the remainders' product dropped. Against the exact
// product: within 5 * 2^-22 of |a b|, the argument for float32 tolerances.
TEST(MmaLayout, ThreeTf32ProductsAreWithinFiveTimesTwoToTheMinus22OfTheProduct) {
  const auto read_by_tensor_core = [](float x) { return from_bits(bits_of(x) & 0xffffe000u); };
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  double worst = 0;
  for (int n = 0; n < 200000; ++n) {
    const float a = value(rng), b = value(rng);
    const float a_hi = tf32(a), b_hi = tf32(b);
    const float a_lo = read_by_tensor_core(a - a_hi), b_lo = read_by_tensor_core(b - b_hi);
    // Each TF32 product is exact in double (11 x 11 significant bits).
    const double approx =
        static_cast<double>(a_lo) * b_hi + static_cast<double>(a_hi) * b_lo + static_cast<double>(a_hi) * b_hi;
    const double exact = static_cast<double>(a) * b;
    if (exact != 0) worst = std::max(worst, std::fabs(approx - exact) / std::fabs(exact));
  }
  std::printf("3xTF32 product, worst relative error over 200000 pairs: %.3g (2^-22 = %.3g)\n", worst, 0x1p-22);
  EXPECT_LE(worst, 5 * 0x1p-22);
  EXPECT_GT(worst, 0x1p-22);  // the split is not exact: the bound is what the kernels rely on
}

}  // namespace
}  // namespace attention::cuda::mma
