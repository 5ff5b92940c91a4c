// The CUDA twins (harness/device_memory/cuda_device_memory.cu) on the warp
// emulator: their copies, the scatter kernel of a round's scattered words
// and the growth of its scratch, and `holds` (support/twin_rounds.h, which
// the GPU test runs on a device).
#include <gtest/gtest.h>

#include "cuda_twins_on_emulator.h"
#include "support/twin_rounds.h"

namespace harness {
namespace {

TEST(CudaTwinsOnEmulator, ARoundsSpansAndScatteredWordsLandWhereTheStandInsDo) {
  testing::expect_rounds_land_where_the_stand_ins_do(*make_cuda_device_memory_on_emulator(0));
}

}  // namespace
}  // namespace harness
