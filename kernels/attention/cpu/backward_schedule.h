// How the fast CPU backward shares its single pass among threads.
//
// One task owns some key tiles of one (batch, kv head): it sums their dk and
// dv itself, so those need neither locks nor a second pass. Its dq terms go
// to a partial dq of its own, a slot of [q_tiles * kTile, ld] floats; the
// slots of a head are then added in a fixed order. A round covers one query
// head of each group (the g-th) for `wave` (batch, kv head) pairs, `chunks`
// tasks each; the group's query heads follow in rounds, adding to dk and dv.
// The sums are fixed by the shape and the thread count, not by which thread
// ran what.
#ifndef ATTENTION_CPU_BACKWARD_SCHEDULE_H
#define ATTENTION_CPU_BACKWARD_SCHEDULE_H

#include <algorithm>
#include <cstdint>

#include "tile_plan.h"

namespace attention::cpu::detail {

struct BackwardSchedule {
  int64_t chunks = 1;       // tasks per (batch, kv head) in a round
  int64_t wave = 1;         // (batch, kv head) pairs per round
  int64_t slot_floats = 0;  // one partial dq

  BackwardSchedule() = default;

  // The slots' floats stay within what the harness allows per thread beyond
  // its tiles (128 queries against every key); up to 4 tasks per thread keep
  // the threads busy when tasks differ in size or a CPU is shared.
  BackwardSchedule(const TilePlan& plan, int participants) : slot_floats(plan.q_tiles * kTile * plan.ld) {
    const Shape& s = plan.shape;
    const int64_t budget = participants * int64_t{128} * std::max(s.n_q, s.n_kv);
    int64_t slots = std::clamp<int64_t>(budget / slot_floats, 1, participants > 1 ? 4 * participants : 1);
    if (slots > participants) slots -= slots % participants;  // 5 tasks on 4 threads take as long as 8
    chunks = std::min(plan.kv_tiles, slots);
    wave = std::clamp<int64_t>(slots / chunks, 1, s.batch * s.heads_kv);
  }

  int64_t slots() const { return chunks * wave; }

  // Chunk c's key tile at its turn t (t = 0, 1, ...), or -1 past the last.
  // Dealt out in a snake (0 1 2 2 1 0 0 1 2 ...): under the causal mask a
  // key tile's work falls with its index, and the snake evens the chunks.
  int64_t key_tile(const TilePlan& plan, int64_t chunk, int64_t turn) const {
    const int64_t tile = turn * chunks + (turn % 2 == 0 ? chunk : chunks - 1 - chunk);
    return tile < plan.kv_tiles ? tile : -1;
  }
};

}  // namespace attention::cpu::detail

#endif  // ATTENTION_CPU_BACKWARD_SCHEDULE_H
