#include <gtest/gtest.h>

#include "saxpy_probe/saxpy_reference.h"

TEST(SaxpyProbeReference, ComputesAXPlusYInFloat64) {
  const float x[3] = {1, 2, 3};
  const float y[3] = {0.5f, -1, 0};
  double z[3];
  reference::saxpy(x, y, 3, 2.0, z);
  EXPECT_DOUBLE_EQ(z[0], 2.5);
  EXPECT_DOUBLE_EQ(z[1], 3.0);
  EXPECT_DOUBLE_EQ(z[2], 6.0);
}
