// The byte model in the cold judgement (judged_cold): state a call must read
// beyond its bound tensors counts, so a replayed answer cannot look warm.
#include <gtest/gtest.h>

#include <cstdint>

#include "harness/challenge_api/case_context.h"

namespace harness {
namespace {

// cpu-replay-attend: kv_cache's quick decode case binds 16 queries and
// outputs (2 x 256 KiB per set, 2 sets) but must read a 512 MiB cache.
TEST(ByteModel, StateTheCallMustReadMakesTheCaseCold) {
  const double set_bytes = 2.0 * 16 * 32 * 128 * 4;
  const double cache_read = 16.0 * 4096 * 2 * 8 * 128 * 4;
  const uint64_t llc = 32u << 20;
  EXPECT_TRUE(judged_cold(set_bytes, 2, ByteModel{cache_read + set_bytes / 2, set_bytes / 2}, llc));
  // Judged on the bound tensors alone (the rule before), it was never cold,
  // so no speed was impossible.
  EXPECT_FALSE(judged_cold(set_bytes, 2, ByteModel{}, llc));
}

}  // namespace
}  // namespace harness
