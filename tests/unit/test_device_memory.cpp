// The stand-in device (harness/device_memory): twins the harness owns, that a
// worker opens through the handle alone, and the choice of it by
// HARNESS_DEVICE_MEMORY.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "harness/core/error.h"
#include "harness/device_memory/device_memory.h"
#include "support/test_support.h"

namespace harness {
namespace {

constexpr size_t kTwinBytes = 3 * 4096;

TEST(StandInDevice, ATwinHoldsWhatTheHarnessCopiedInAndWhatTheHandleOpensIsTheSameMemory) {
  auto memory = make_stand_in_device_memory();
  auto twin = memory->allocate(kTwinBytes, "logits");
  ASSERT_EQ(twin->bytes(), kTwinBytes);
  EXPECT_NE(twin->inode(), 0u);
  std::vector<unsigned char> host(kTwinBytes);
  std::iota(host.begin(), host.end(), static_cast<unsigned char>(1));
  twin->upload(host.data(), 0, host.size());

  // What a worker does with the handle: map the descriptor it was sent.
  const DeviceHandle handle = twin->handle();
  EXPECT_EQ(handle.open.value("kind", ""), "stand-in");
  ASSERT_GE(handle.fd, 0);
  void* mapped = ::mmap(nullptr, kTwinBytes, PROT_READ | PROT_WRITE, MAP_SHARED, handle.fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* device = static_cast<unsigned char*>(mapped);
  EXPECT_EQ(std::memcmp(device, host.data(), kTwinBytes), 0);
  // The worker's writes are what the harness reads back, part or whole.
  std::memset(device + 4096, 0xAB, 100);
  std::vector<unsigned char> back(kTwinBytes);
  twin->download(back.data(), 0, back.size());
  EXPECT_EQ(back[4095], host[4095]);
  EXPECT_EQ(back[4096], 0xAB);
  EXPECT_EQ(back[4195], 0xAB);
  EXPECT_EQ(back[4196], host[4196]);
  unsigned char one = 0;
  twin->download(&one, 4100, 1);
  EXPECT_EQ(one, 0xAB);
  ::munmap(mapped, kTwinBytes);
  // Sealed at its size: a worker cannot grow it to keep memory nobody sees.
  EXPECT_EQ(::ftruncate(handle.fd, 2 * kTwinBytes), -1);
}

TEST(StandInDevice, ACopyOutsideTheTwinIsRefusedNamingTheTwinAndTheRange) {
  auto twin = make_stand_in_device_memory()->allocate(kTwinBytes, "probs");
  std::vector<unsigned char> host(kTwinBytes + 1);
  try {
    twin->upload(host.data(), 1, kTwinBytes);
    FAIL() << "a copy past the twin's end was made";
  } catch (const HarnessError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("upload of bytes [1, 12289)"), std::string::npos) << message;
    EXPECT_NE(message.find("twin of probs, which holds 12288 bytes"), std::string::npos) << message;
  }
  EXPECT_THROW(twin->download(host.data(), kTwinBytes + 1, 0), HarnessError);
}

TEST(StandInDevice, HarnessDeviceMemoryChoosesWhoOwnsTheMemoryOrSaysWhatItAccepts) {
  {
    testing::ScopedEnv unset("HARNESS_DEVICE_MEMORY", "");
    EXPECT_EQ(device_memory_choice(), DeviceMemoryChoice::worker);
    EXPECT_EQ(device_memory_option(DeviceMemoryChoice::worker), "");
  }
  {
    testing::ScopedEnv chosen("HARNESS_DEVICE_MEMORY", "stand-in");
    EXPECT_EQ(device_memory_choice(), DeviceMemoryChoice::stand_in);
    EXPECT_EQ(device_memory_option(DeviceMemoryChoice::stand_in), "stand-in");
  }
  {
    testing::ScopedEnv chosen("HARNESS_DEVICE_MEMORY", "harness");
    EXPECT_EQ(device_memory_choice(), DeviceMemoryChoice::harness);
  }
  testing::ScopedEnv wrong("HARNESS_DEVICE_MEMORY", "gpu");
  try {
    device_memory_choice();
    FAIL() << "HARNESS_DEVICE_MEMORY=gpu was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("HARNESS_DEVICE_MEMORY='gpu': accepted are 'stand-in'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace harness
