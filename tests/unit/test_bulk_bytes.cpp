// The passes split over the cores from kBulkBytes (core/bulk_bytes.h): the
// same answers as one pass, at chunk boundaries and in a short tail too.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "harness/challenge_api/input_stage.h"
#include "harness/core/bulk_bytes.h"
#include "harness/core/dtype.h"
#include "harness/memory/shared_tensor.h"

namespace harness {
namespace {

// Past the threshold, with a tail that is no whole chunk unit.
constexpr size_t kElements = (kBulkBytes / 4) * 3 + 7;

TEST(BulkBytes, ChunksCoverEveryByteOnceOnAlignedBoundaries) {
  std::vector<int> seen(kElements * 4, 0);
  std::vector<std::pair<size_t, size_t>> chunks;
  std::mutex mutex;
  for_byte_chunks(seen.size(), 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) ++seen[i];
    const std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(begin, end);
  });
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "byte " << i;
  for (const auto& [begin, end] : chunks) {
    EXPECT_EQ(begin % 4096, 0u);
    if (end != seen.size()) {
      EXPECT_EQ(end % 4096, 0u);
    }
  }
}

TEST(BulkBytes, PoisonIsFilledAndCountedAcrossChunksWithItsFirstIndex) {
  std::vector<float> values(kElements, 1.0f);
  fill_poison(values.data(), values.size(), DType::f32);
  size_t first = 0;
  EXPECT_EQ(count_poison(values.data(), values.size(), DType::f32, &first), values.size());
  EXPECT_EQ(first, 0u);
  // Written everywhere but a few elements late in the buffer (another chunk
  // than the first on any core count above one) and the very last one.
  std::vector<float> written(kElements, 2.0f);
  const size_t late = kElements - kElements / 5;
  std::memcpy(&written[late], &values[0], 3 * sizeof(float));
  std::memcpy(&written[kElements - 1], &values[0], sizeof(float));
  EXPECT_EQ(count_poison(written.data(), written.size(), DType::f32, &first), 4u);
  EXPECT_EQ(first, late);
}

TEST(BulkBytes, SameBytesSeesOneByteAnywhere) {
  std::vector<unsigned char> a(kElements * 4, 7), b = a;
  EXPECT_TRUE(same_bytes(a.data(), b.data(), a.size()));
  for (const size_t at : {size_t{0}, a.size() / 2 + 1, a.size() - 1}) {
    b[at] ^= 1;
    EXPECT_FALSE(same_bytes(a.data(), b.data(), a.size())) << "byte " << at;
    b[at] ^= 1;
  }
}

// A copy in chunks is the whole copy: every byte, an odd size's tail included.
TEST(BulkBytes, ACopyInChunksCopiesEveryByte) {
  std::vector<unsigned char> from(kElements * 4 + 3), to(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<unsigned char>(i * 131 + 7);
  copy_bytes(to.data(), from.data(), from.size());
  EXPECT_EQ(to, from);
}

// The staging diff in chunks: exactly the differing words, on both sides of
// a 256-byte block boundary and in the tail, and publishing them gives the
// new contents.
TEST(BulkBytes, StagingAStagedTensorGivesExactlyItsNewContents) {
  SharedTensor t(1, TensorSpec{"x", DType::f32, {static_cast<int64_t>(kElements)}});
  for (size_t i = 0; i < kElements; ++i) t.as<float>()[i] = static_cast<float>(i % 1000);
  std::vector<float> next(t.as<float>(), t.as<float>() + kElements);
  for (const size_t at : {size_t{3}, size_t{62}, size_t{63}, size_t{64}, size_t{65}, kElements / 2, kElements - 1}) {
    next[at] = -1.0f;
  }
  InputStage stage;
  stage.stage(t, next.data());
  // 3 | 62-63 | 64-65 (one run over the block boundary) | the middle word | the 4-byte tail.
  EXPECT_EQ(stage.changed_bytes(), 8u + 8u + 8u + 8u + 4u);
  stage.publish();
  EXPECT_EQ(std::memcmp(t.raw(), next.data(), t.bytes()), 0);
}

}  // namespace
}  // namespace harness
