// The CUDA twins' own copies (harness/device_memory/cuda_device_memory.cu)
// on a GPU: support/twin_rounds.h. Without a GPU these tests skip and say
// why (the same rounds run on the warp emulator everywhere:
// tests/emulated/test_cuda_twins_on_emulator.cpp).
#include <gtest/gtest.h>

#include "gpu/gpu_test_support.h"
#include "harness/device_memory/device_memory.h"
#include "support/twin_rounds.h"

namespace harness {
namespace {

TEST(CudaTwins, ARoundsSpansAndScatteredWordsLandWhereTheStandInsDo) {
  REQUIRE_CUDA_DEVICE();
  testing::expect_rounds_land_where_the_stand_ins_do(*make_cuda_device_memory(0));
}

}  // namespace
}  // namespace harness
