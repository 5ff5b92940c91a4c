// The device-memory witness: a GPU worker's memory as the driver reports
// it, counted in the driver's granules, the worker's copies of the
// harness's tensors apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include "harness/witness/device_memory.h"

namespace harness {
namespace {

// Without a GPU driver, or for a process that is not on a GPU (this test),
// there is no device-memory reading, and the reason says which.
TEST(DeviceMemoryWitness, AProcessNotOnAGpuHasNoReadingAndSaysWhy) {
  const DeviceMemoryReading reading = device_memory_of_process(::getpid(), 0);
  EXPECT_FALSE(reading.bytes.has_value());
  EXPECT_FALSE(reading.why_not.empty());
}

TEST(DeviceMemoryWitness, CountsTheDriversGranulesOfEachBuffer) {
  EXPECT_EQ(device_granules(0), 0);
  EXPECT_EQ(device_granules(1), kDeviceGranuleBytes);
  EXPECT_EQ(device_granules(kDeviceGranuleBytes), kDeviceGranuleBytes);
  EXPECT_EQ(device_granules(kDeviceGranuleBytes + 1), 2 * kDeviceGranuleBytes);
}

// cuda-hidden-input-store on an H100 (layernorm perf.forward.normal.r2048.d16384,
// seed 1): two floats per row declared, the input kept in a store of its own.
TEST(DeviceMemoryWitness, AHiddenStoreOfTheInputIsUnderstated) {
  const int64_t bytes = 1224736768, harness_tensors = 557842432, growth = 123731968;
  const MemoryJudgement j = judge_device_memory(16384, bytes - harness_tensors - growth, bytes, harness_tensors);
  EXPECT_TRUE(j.understated);
  EXPECT_EQ(j.witnessed, growth);
  EXPECT_NE(j.message.find("557842432 bytes of copies of the harness's tensors"), std::string::npos) << j.message;
}

// Our cuda-fast layernorm on an H200: the worker's device memory grew by
// 547356672 bytes over a perf case, all of it its copies of the harness's
// tensors (x, y, dy, dx, the saved state...), against a claim of 16384.
// Counted as the submission's, they would fail it.
TEST(DeviceMemoryWitness, TheWorkersCopiesOfTheHarnesssTensorsAreNotTheSubmissions) {
  const int64_t baseline = 600 << 20, copies = 547356672;
  EXPECT_FALSE(judge_device_memory(16384, baseline, baseline + copies, copies).understated);
  EXPECT_TRUE(judge_device_memory(16384, baseline, baseline + copies, 0).understated);
}

}  // namespace
}  // namespace harness
