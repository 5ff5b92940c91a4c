// The elementwise steps of the fast CPU attention on a tile of kTile x kTile
// scores: the mask, the online softmax, p = exp(s - lse) and
// ds = p * (dp - D). Two layouts: "by query" tiles hold one query per row
// (s[i * kTile + j]), "by key" tiles one key per row (s[j * kTile + i]), so
// that a per-query quantity is a vector across the row.
#ifndef ATTENTION_CPU_TILE_SOFTMAX_H
#define ATTENTION_CPU_TILE_SOFTMAX_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common/vec_math.h"
#include "tile_products.h"

namespace attention::cpu::detail {

using kernels::common::vbroadcast;
using kernels::common::vexp;
using kernels::common::vfloat;
using kernels::common::vload;
using kernels::common::vmax;

inline void vstore(float* p, vfloat v) { std::memcpy(p, &v, sizeof(v)); }

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// Which scores of the tile (queries i0 + [0, rows), keys j0 + [0, kTile))
// exist: key j < n_kv and, when causal, j <= i + offset.
struct TileMask {
  int64_t i0, rows, j0, n_kv, offset;
  bool causal;
  // Of query row r, the keys [0, seen) of the tile.
  int64_t seen(int64_t r) const {
    int64_t n = r < rows ? n_kv - j0 : 0;
    if (causal) n = std::min(n, i0 + r + offset + 1 - j0);
    return std::clamp<int64_t>(n, 0, kTile);
  }
  // Of key row c, the queries [first, last) of the tile that see it.
  int64_t first(int64_t c) const { return causal ? std::clamp<int64_t>(j0 + c - offset - i0, 0, kTile) : 0; }
  int64_t last(int64_t c) const { return j0 + c < n_kv ? rows : 0; }
};

// Hidden scores become -inf: exp gives 0, and no max picks them.
inline void mask_by_query(const TileMask& m, float* s) {
  for (int64_t r = 0; r < kTile; ++r) std::fill(s + r * kTile + m.seen(r), s + (r + 1) * kTile, kMinusInf);
}

inline void mask_by_key(const TileMask& m, float* s) {
  for (int64_t c = 0; c < kTile; ++c) {
    float* row = s + c * kTile;
    const int64_t last = m.last(c), first = std::min(m.first(c), last);
    std::fill(row, row + first, kMinusInf);
    std::fill(row + last, row + kTile, kMinusInf);
  }
}

// One key tile of the online softmax, by key: raises the running max m of
// every query, turns the scores into exp(s - m) in place, adds them to the
// running sum l, and rescales row r of the output accumulator o [kTile, ld]
// by exp(m_old - m_new) (alpha [kTile] is scratch). A query that has seen no
// key keeps m = -inf, l = 0 and o = 0.
inline void online_softmax_by_key(float* s, float* m, float* l, float* alpha, float* o, int64_t ld) {
  const vfloat minus_inf = vbroadcast(kMinusInf);
  for (int v = 0; v < kTileVectors; ++v) {
    vfloat top = minus_inf;
    for (int64_t c = 0; c < kTile; ++c) top = vmax(top, vload(s + c * kTile + v * kLanes));
    const vfloat m_old = vload(m + v * kLanes), m_new = vmax(m_old, top);
    // exp(-inf - -inf) would be NaN: with nothing seen yet, shift by 0.
    const vfloat shift = m_new == minus_inf ? vbroadcast(0.0f) : m_new;
    vfloat sum = {};
    for (int64_t c = 0; c < kTile; ++c) {
      const vfloat p = vexp(vload(s + c * kTile + v * kLanes) - shift);
      vstore(s + c * kTile + v * kLanes, p);
      sum += p;
    }
    const vfloat a = vexp(m_old - shift);  // exactly 1 when the max stays, 0 from -inf
    vstore(alpha + v * kLanes, a);
    vstore(l + v * kLanes, vload(l + v * kLanes) * a + sum);
    vstore(m + v * kLanes, m_new);
  }
  for (int64_t r = 0; r < kTile; ++r) {
    if (alpha[r] == 1.0f) continue;
    for (int64_t d = 0; d < ld; d += kLanes) vstore(o + r * ld + d, vload(o + r * ld + d) * alpha[r]);
  }
}

// p = exp(s - lse) in place, by query: lse[r] for r < rows; rows at or past
// `rows`, and rows whose lse is -inf (no key seen), are all zero.
inline void probabilities_by_query(float* s, const float* lse, int64_t rows) {
  for (int64_t r = 0; r < kTile; ++r) {
    float* row = s + r * kTile;
    if (r >= rows || lse[r] == kMinusInf) {
      std::fill(row, row + kTile, 0.0f);
      continue;
    }
    for (int c = 0; c < kTileVectors; ++c) vstore(row + c * kLanes, vexp(vload(row + c * kLanes) - lse[r]));
  }
}

// ds = p * (dp - D) in place of p, by query: D[r] = rowsum(dout * o), r < rows
// (the rows past it are 0 already).
inline void score_gradients_by_query(float* p, const float* dp, const float* row_terms, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < kTileVectors; ++c) {
      float* at = p + r * kTile + c * kLanes;
      vstore(at, vload(at) * (vload(dp + r * kTile + c * kLanes) - row_terms[r]));
    }
}

}  // namespace attention::cpu::detail

#endif  // ATTENTION_CPU_TILE_SOFTMAX_H
