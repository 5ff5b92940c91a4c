// changed_words (harness/device_memory/twin_writes.h): what a round changed
// in a buffer, as spans where runs are long and single words where they lie
// apart, the same whether the buffer is scanned on one thread or several.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness/core/bulk_bytes.h"
#include "harness/device_memory/twin_writes.h"

namespace harness {
namespace {

std::vector<uint64_t> words_of(size_t bytes) {
  std::vector<uint64_t> w(bytes / 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = i * 0x9E3779B97F4A7C15ull;
  return w;
}

const unsigned char* bytes_of(const std::vector<uint64_t>& w) {
  return reinterpret_cast<const unsigned char*>(w.data());
}

TEST(TwinWrites, NothingChangedIsNothingToWrite) {
  const std::vector<uint64_t> before = words_of(1 << 16);
  const std::vector<uint64_t> now = before;
  const TwinWrites writes = changed_words(bytes_of(now), bytes_of(before), 1 << 16, 64);
  EXPECT_TRUE(writes.empty());
  EXPECT_EQ(writes.bytes(), 0u);
}

TEST(TwinWrites, ScatteredWordsAreWordsAndALongRunIsOneSpanAtItsTwinOffset) {
  const size_t bytes = 1 << 16;
  const std::vector<uint64_t> before = words_of(bytes);
  std::vector<uint64_t> now = before;
  now[3] ^= 1;
  now[4] ^= 1;  // touching words stay words below a span's length
  now[1000] ^= 1u << 31;
  for (size_t i = 2048; i < 2048 + 1024; ++i) now[i] = ~now[i];  // 8 KiB poisoned
  const size_t twin_offset = 2 << 20;
  const TwinWrites writes = changed_words(bytes_of(now), bytes_of(before), bytes, twin_offset);
  ASSERT_EQ(writes.word_offsets.size(), 3u);
  EXPECT_EQ(writes.word_offsets[0], twin_offset + 3 * 8);
  EXPECT_EQ(writes.word_offsets[1], twin_offset + 4 * 8);
  EXPECT_EQ(writes.word_offsets[2], twin_offset + 1000 * 8);
  EXPECT_EQ(writes.words[2], now[1000]);
  ASSERT_EQ(writes.spans.size(), 1u);
  EXPECT_EQ(writes.spans[0].offset, twin_offset + 2048 * 8);
  EXPECT_EQ(writes.spans[0].bytes, 8192u);
  EXPECT_EQ(writes.spans[0].from, bytes_of(now) + 2048 * 8);
  EXPECT_EQ(writes.bytes(), 24u + 8192u);
}

// Above kBulkBytes the scan is split over the host's cores: a run across a
// split is one span, and applying the writes to `before` gives `now`.
TEST(TwinWrites, ARunAcrossTheScansSplitsIsOneSpanAndTheWritesRebuildTheBuffer) {
  const size_t bytes = 4 * kBulkBytes;
  const std::vector<uint64_t> before = words_of(bytes);
  std::vector<uint64_t> now = before;
  const size_t words = bytes / 8;
  for (size_t i = words / 2 - 4096; i < words / 2 + 4096; ++i) now[i] += 1;  // 64 KiB about the middle
  for (size_t i = 7; i < words; i += 100003) now[i] += 1;
  const TwinWrites writes = changed_words(bytes_of(now), bytes_of(before), bytes, 0);
  ASSERT_EQ(writes.spans.size(), 1u);
  EXPECT_EQ(writes.spans[0].offset, (words / 2 - 4096) * 8);
  EXPECT_EQ(writes.spans[0].bytes, 8192u * 8);
  std::vector<uint64_t> rebuilt = before;
  auto* out = reinterpret_cast<unsigned char*>(rebuilt.data());
  for (const TwinWrites::Span& s : writes.spans) std::memcpy(out + s.offset, s.from, s.bytes);
  for (size_t i = 0; i < writes.word_offsets.size(); ++i)
    std::memcpy(out + writes.word_offsets[i], &writes.words[i], 8);
  EXPECT_EQ(rebuilt, now);
  EXPECT_EQ(writes.bytes(), 8192u * 8 + 8 * writes.word_offsets.size());
}

}  // namespace
}  // namespace harness
