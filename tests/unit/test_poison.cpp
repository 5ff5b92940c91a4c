// Poison: what the harness writes into outputs before a call, and the count
// of elements still holding it after (unwritten_output).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "harness/core/dtype.h"

namespace harness {
namespace {

TEST(Poison, FloatPoisonIsNaNAndIntegerPoisonIsNegative) {
  float f;
  fill_poison(&f, 1, DType::f32);
  EXPECT_TRUE(std::isnan(f));
  double d;
  fill_poison(&d, 1, DType::f64);
  EXPECT_TRUE(std::isnan(d));
  int32_t i;
  fill_poison(&i, 1, DType::i32);
  EXPECT_LT(i, 0);
}

TEST(Poison, CountFindsExactlyTheUntouchedElements) {
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::i32, DType::i64, DType::u8}) {
    std::vector<unsigned char> bytes(1000 * dtype_size(dtype));
    fill_poison(bytes.data(), 1000, dtype);
    size_t first = 0;
    EXPECT_EQ(count_poison(bytes.data(), 1000, dtype, &first), 1000u) << dtype_name(dtype);
    EXPECT_EQ(first, 0u);
    // Overwrite the first 300 elements with zeros and element 999 with ones.
    std::memset(bytes.data(), 0, 300 * dtype_size(dtype));
    std::memset(bytes.data() + 999 * dtype_size(dtype), 1, dtype_size(dtype));
    EXPECT_EQ(count_poison(bytes.data(), 1000, dtype, &first), 699u) << dtype_name(dtype);
    EXPECT_EQ(first, 300u) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace harness
