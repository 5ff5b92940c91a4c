// Where the tiles of one attention call lie: tile counts, which keys a query
// tile needs under the causal mask, which query tiles a key tile needs, and
// the per-thread scratch a task carves into tiles.
#ifndef ATTENTION_CPU_TILE_PLAN_H
#define ATTENTION_CPU_TILE_PLAN_H

#include <algorithm>
#include <cstdint>

#include "attention_cpu.h"
#include "tile_products.h"
#include "tile_softmax.h"

namespace attention::cpu::detail {

struct TilePlan {
  Shape shape;
  int64_t group;     // query heads per kv head
  int64_t offset;    // n_kv - n_q: query i sees keys j <= i + offset
  int64_t vectors;   // a padded row: vectors * kLanes >= dim floats
  int64_t ld;        // vectors * kLanes
  int64_t q_tiles;   // ceil(n_q / kTile)
  int64_t kv_tiles;  // ceil(n_kv / kTile)

  explicit TilePlan(const Shape& s)
      : shape(s),
        group(s.heads_q / s.heads_kv),
        offset(s.n_kv - s.n_q),
        vectors((s.dim + kLanes - 1) / kLanes),
        ld(vectors * kLanes),
        q_tiles((s.n_q + kTile - 1) / kTile),
        kv_tiles((s.n_kv + kTile - 1) / kTile) {}

  // Keys [0, end) that the queries up to `last` see.
  int64_t keys_end(int64_t last) const {
    return shape.causal ? std::clamp<int64_t>(last + offset + 1, 0, shape.n_kv) : shape.n_kv;
  }
  // The first query tile that sees a key at or past j0.
  int64_t first_q_tile(int64_t j0) const { return shape.causal ? std::max<int64_t>(0, j0 - offset) / kTile : 0; }

  // The mask of the tile of queries [i0, i0 + rows) and keys from j0, and
  // whether it hides anything there.
  TileMask mask(int64_t i0, int64_t rows, int64_t j0) const {
    return TileMask{i0, rows, j0, shape.n_kv, offset, shape.causal};
  }
  bool hides(int64_t i0, int64_t rows, int64_t j0) const {
    return rows < kTile || j0 + kTile > shape.n_kv || (shape.causal && j0 + kTile - 1 > i0 + offset);
  }

  // Floats of one thread's scratch: `tiles` tiles of kTile x max(ld, kTile)
  // (a [kTile, ld] row tile, a [dim, kTile] transposed one or a score tile),
  // then `vector_count` vectors of kTile; a multiple of kLanes, so slots stay aligned.
  int64_t slot_floats() const { return kTile * std::max(ld, kTile); }
  int64_t thread_floats(int tiles, int vector_count) const { return tiles * slot_floats() + vector_count * kTile; }
};

// One thread's scratch, handed out as tiles and vectors.
class Slots {
 public:
  Slots(const TilePlan& plan, float* base, int tiles) : base_(base), size_(plan.slot_floats()), tiles_(tiles) {}
  float* tile(int i) const { return base_ + i * size_; }
  float* vector(int i) const { return base_ + tiles_ * size_ + i * kTile; }

 private:
  float* base_;
  int64_t size_;
  int tiles_;
};

}  // namespace attention::cpu::detail

#endif  // ATTENTION_CPU_TILE_PLAN_H
