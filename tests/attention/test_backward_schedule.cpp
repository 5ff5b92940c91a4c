// How the fast CPU backward shares its single pass
// (kernels/attention/cpu/backward_schedule.h): every key tile of a head goes
// to exactly one task, the partial dq slots stay within what the memory
// allowance gives each thread, and under the causal mask the tasks of a
// head get even shares of the work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attention/cpu/backward_schedule.h"

namespace attention::cpu::detail {
namespace {

Shape shape_of(int64_t kv_heads, int64_t n_q, int64_t n_kv, int64_t dim, bool causal) {
  Shape s;
  s.batch = 1;
  s.heads_q = kv_heads;
  s.heads_kv = kv_heads;
  s.n_q = n_q;
  s.n_kv = n_kv;
  s.dim = dim;
  s.causal = causal;
  return s;
}

// The key tiles of each chunk, as the tasks walk them.
std::vector<std::vector<int64_t>> chunk_tiles(const TilePlan& plan, const BackwardSchedule& schedule) {
  std::vector<std::vector<int64_t>> tiles(schedule.chunks);
  for (int64_t c = 0; c < schedule.chunks; ++c)
    for (int64_t turn = 0; turn * schedule.chunks < plan.kv_tiles; ++turn) {
      const int64_t tile = schedule.key_tile(plan, c, turn);
      if (tile >= 0) tiles[c].push_back(tile);
    }
  return tiles;
}

// Query tiles times key tiles a chunk computes: its share of the work.
int64_t work(const TilePlan& plan, const std::vector<int64_t>& tiles) {
  int64_t pairs = 0;
  for (int64_t tile : tiles) pairs += plan.q_tiles - plan.first_q_tile(tile * kTile);
  return pairs;
}

TEST(BackwardSchedule, EveryKeyTileGoesToExactlyOneTask) {
  for (int participants : {1, 2, 3, 8, 16, 64})
    for (int64_t n_kv : {1, 63, 64, 65, 300, 512, 1000, 8192})
      for (bool causal : {false, true}) {
        const TilePlan plan(shape_of(3, 200, n_kv, 64, causal));
        const BackwardSchedule schedule(plan, participants);
        SCOPED_TRACE(testing::Message() << participants << " threads, n_kv " << n_kv);
        std::vector<int> seen(plan.kv_tiles, 0);
        for (const auto& tiles : chunk_tiles(plan, schedule)) {
          EXPECT_FALSE(tiles.empty()) << "a task with no key tile";
          for (int64_t tile : tiles) {
            ASSERT_GE(tile, 0);
            ASSERT_LT(tile, plan.kv_tiles);
            ++seen[tile];
          }
        }
        for (int64_t tile = 0; tile < plan.kv_tiles; ++tile) EXPECT_EQ(seen[tile], 1) << "key tile " << tile;
        EXPECT_GE(schedule.wave, 1);
        EXPECT_LE(schedule.wave, 3);
      }
}

// The allowance gives each thread 128 floats per key (or query) beyond its
// tiles; the slots take no more, unless one slot is already more.
TEST(BackwardSchedule, PartialDqSlotsStayWithinTheMemoryAllowance) {
  for (int participants : {1, 2, 16})
    for (int64_t n : {1, 77, 512, 1024, 16384})
      for (int64_t dim : {32, 64, 96, 128})
        for (int64_t kv_heads : {1, 4, 32}) {
          const TilePlan plan(shape_of(kv_heads, n, std::max<int64_t>(1, n / 2), dim, true));
          const BackwardSchedule schedule(plan, participants);
          SCOPED_TRACE(testing::Message() << participants << " threads, n " << n << ", dim " << dim);
          EXPECT_EQ(schedule.slot_floats, plan.q_tiles * kTile * plan.ld);
          const int64_t budget = participants * int64_t{128} * n;
          EXPECT_LE(schedule.slots() * schedule.slot_floats, std::max(budget, schedule.slot_floats));
          EXPECT_LE(schedule.slots(), participants > 1 ? 4 * participants : 1);
          if (schedule.slots() > participants) {
            EXPECT_EQ(schedule.slots() % participants, 0);
          }
        }
}

// How long a round's tasks keep `participants` threads that each take the
// next task when free, as the pool does, against a perfect split of the work.
double round_stretch(const TilePlan& plan, const BackwardSchedule& schedule, int participants) {
  std::vector<int64_t> busy(participants, 0);
  int64_t total = 0;
  for (int64_t head = 0; head < schedule.wave; ++head)
    for (const auto& tiles : chunk_tiles(plan, schedule)) {
      *std::min_element(busy.begin(), busy.end()) += work(plan, tiles);
      total += work(plan, tiles);
    }
  const int64_t longest = *std::max_element(busy.begin(), busy.end());
  return static_cast<double>(longest * participants) / static_cast<double>(total);
}

// Under the causal mask key tile j is seen by q_tiles - j query tiles. Dealt
// out in turn (0 1 2 3 0 1 2 3), the first of 4 tasks of a 512-long head
// gets 12 of its 36 tile pairs and the last 6; the snake gives each 9. Over
// the shapes below, dealt in turn, a round would last up to 1.41 times a
// perfect split (8 threads, n 1024, dim 96); with the snake at most 1.10.
TEST(BackwardSchedule, CausalWorkIsSharedEvenly) {
  const TilePlan prefill(shape_of(4, 512, 512, 64, true));
  const BackwardSchedule two_threads(prefill, 2);
  ASSERT_EQ(two_threads.chunks, 4);
  for (const auto& tiles : chunk_tiles(prefill, two_threads)) EXPECT_EQ(work(prefill, tiles), 9);

  for (int participants : {2, 3, 4, 6, 8, 16})
    for (int64_t n : {100, 512, 1024, 4096, 16384})
      for (int64_t dim : {32, 64, 96, 128})
        for (int64_t kv_heads : {1, 2, 4, 32}) {
          const TilePlan plan(shape_of(kv_heads, n, n, dim, true));
          if (plan.kv_tiles < 2 * participants) continue;  // too few tiles to share
          const BackwardSchedule schedule(plan, participants);
          EXPECT_LE(round_stretch(plan, schedule, participants), 1.11)
              << participants << " threads, n " << n << ", dim " << dim << ", " << kv_heads << " heads";
        }
}

// One head of many keys (the long-context shape) is split across the threads;
// many small heads fill the threads a round at a time.
TEST(BackwardSchedule, ThreadsAreKeptBusyAcrossKeysAndHeads) {
  const TilePlan long_context(shape_of(1, 256, 8192, 64, false));
  EXPECT_EQ(BackwardSchedule(long_context, 2).chunks, 8);
  EXPECT_EQ(BackwardSchedule(long_context, 16).chunks, 64);
  const TilePlan many_heads(shape_of(32, 100, 100, 64, true));
  const BackwardSchedule schedule(many_heads, 8);
  EXPECT_EQ(schedule.chunks, 2);
  EXPECT_GE(schedule.chunks * schedule.wave, 8);
  EXPECT_EQ(BackwardSchedule(many_heads, 1).slots(), 1);
}

}  // namespace
}  // namespace attention::cpu::detail
