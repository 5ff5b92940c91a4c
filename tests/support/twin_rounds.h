// A round's writes to a device twin (spans copied, scattered words by one
// upload and the harness's scatter kernel) land where the stand-in's do,
// and `holds` sees a single changed byte: for the CUDA twins on a GPU
// (tests/gpu/test_cuda_twins.cpp) and on the warp emulator
// (tests/emulated/test_cuda_twins_on_emulator.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness/device_memory/device_memory.h"

namespace harness::testing {

inline void expect_rounds_land_where_the_stand_ins_do(DeviceMemory& device) {
  constexpr size_t kBytes = size_t{6} << 20;
  constexpr size_t kOffset = size_t{2} << 20;  // as a margin puts the buffer
  std::vector<uint64_t> before(kBytes / 8);
  for (size_t i = 0; i < before.size(); ++i) before[i] = i * 0x9E3779B97F4A7C15ull;
  std::vector<uint64_t> now = before;
  for (size_t i = 5; i < now.size(); i += 997) now[i] ^= 0xFFull << (i % 56);  // scattered words
  for (size_t i = 100000; i < 100000 + 4096; ++i) now[i] = ~now[i];            // one 32 KiB span

  const auto* b = reinterpret_cast<const unsigned char*>(before.data());
  const auto* n = reinterpret_cast<const unsigned char*>(now.data());
  const TwinWrites writes = changed_words(n, b, kBytes, kOffset);
  ASSERT_EQ(writes.spans.size(), 1u);
  ASSERT_GT(writes.word_offsets.size(), 700u);

  auto twin = device.allocate(kOffset + kBytes, "a test buffer");
  auto stand_in = make_stand_in_device_memory()->allocate(kOffset + kBytes, "a test buffer");
  for (DeviceTwin* t : {twin.get(), stand_in.get()}) {
    t->upload(b, kOffset, kBytes);
    EXPECT_TRUE(t->holds(b, kOffset, kBytes));
    t->write(writes);
    EXPECT_TRUE(t->holds(n, kOffset, kBytes));
    std::vector<uint64_t> read(now.size());
    t->download(read.data(), kOffset, kBytes);
    EXPECT_EQ(read, now);
  }
  // One byte changed behind the harness's back is seen.
  unsigned char flipped = n[kBytes - 1] ^ 0x01;
  twin->upload(&flipped, kOffset + kBytes - 1, 1);
  EXPECT_FALSE(twin->holds(n, kOffset, kBytes));
}

}  // namespace harness::testing
