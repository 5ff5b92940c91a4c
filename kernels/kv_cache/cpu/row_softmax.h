// The inner step of the CPU attention: the query heads of one GQA group (for
// one query position) against up to kBlockTokens consecutive keys of one
// block tile, folded into their online-softmax states. Vectorised through
// GCC/Clang vector extensions (AVX-512, AVX2 or NEON, whatever -march
// offers), with the exp of kernels/common/vec_math.h.
//
// Tiles as the CPU cache stores them (see paged_cache_cpu.h):
//   K tile [head_dim, kBlockTokens]  transposed: one load brings dimension i
//                                     of all 8 keys, so the scores of a tile
//                                     build up lane-wise, with no horizontal sums
//   V tile [kBlockTokens, head_dim]
// Scores are accumulated in double: with scores of a few hundred (the
// large-score workload), a float score is off by ~|s| * 6e-8, and exp turns
// that into a relative error of the same size in every weight.
#ifndef KV_CACHE_CPU_ROW_SOFTMAX_H
#define KV_CACHE_CPU_ROW_SOFTMAX_H

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/vec_math.h"
#include "kv_cache/block_layout.h"

namespace kvcache::cpu {

using kernels::common::kLanes;
using kernels::common::vbroadcast;
using kernels::common::vexp;
using kernels::common::vfloat;
using kernels::common::vload;

static_assert(kBlockTokens == 8, "a tile's scores are one vector of 8 lanes");
typedef float vfloat8 __attribute__((vector_size(8 * sizeof(float))));
typedef double vdouble8 __attribute__((vector_size(8 * sizeof(double))));

inline void vstore(float* p, vfloat v) { std::memcpy(p, &v, sizeof(v)); }

// State of one row, [head_dim + 4] floats: acc [head_dim] = sum_t p_t V_t
// (unnormalised), then m (double) the running max of the scaled scores, and
// l (double) = sum_t p_t, where p_t = exp(score_t - m).
inline int64_t state_floats(int64_t d) { return d + 4; }
inline double state_m(const float* s, int64_t d) {
  double m;
  std::memcpy(&m, s + d, sizeof(m));
  return m;
}
inline double state_l(const float* s, int64_t d) {
  double l;
  std::memcpy(&l, s + d + 2, sizeof(l));
  return l;
}
inline void set_state_ml(float* s, int64_t d, double m, double l) {
  std::memcpy(s + d, &m, sizeof(m));
  std::memcpy(s + d + 2, &l, sizeof(l));
}
inline void reset_row(float* s, int64_t d) {
  std::memset(s, 0, static_cast<size_t>(d) * sizeof(float));
  set_state_ml(s, d, -INFINITY, 0.0);
}

// Scaled scores of R rows against the 8 keys of a K tile. U accumulators per
// row keep U * R independent FMA chains in flight.
template <int R>
inline void tile_scores(const float* const* q, const float* kt, int64_t d, double scale, vdouble8* s) {
  constexpr int U = R >= 4 ? 2 : 8 / R;
  vdouble8 acc[R][U] = {};
  int64_t i = 0;
  for (; i + U <= d; i += U)
    for (int u = 0; u < U; ++u) {
      vfloat8 k8;
      std::memcpy(&k8, kt + (i + u) * kBlockTokens, sizeof(k8));
      const vdouble8 kd = __builtin_convertvector(k8, vdouble8);
      for (int r = 0; r < R; ++r) acc[r][u] += kd * static_cast<double>(q[r][i + u]);
    }
  for (; i < d; ++i) {
    vfloat8 k8;
    std::memcpy(&k8, kt + i * kBlockTokens, sizeof(k8));
    const vdouble8 kd = __builtin_convertvector(k8, vdouble8);
    for (int r = 0; r < R; ++r) acc[r][0] += kd * static_cast<double>(q[r][i]);
  }
  for (int r = 0; r < R; ++r) {
    vdouble8 sum = acc[r][0];
    for (int u = 1; u < U; ++u) sum += acc[r][u];
    s[r] = sum * scale;
  }
}

// Folds keys [0, count) of the tiles (count in [1, kBlockTokens]; kt and v
// point at the tiles' first key) into the states of R rows.
template <int R>
inline void accumulate_rows(const float* const* q, float* const* states, const float* kt, const float* v, int64_t count,
                            int64_t d, double scale) {
  vdouble8 s[R];
  tile_scores<R>(q, kt, d, scale, s);
  vfloat8 p[R];
  for (int r = 0; r < R; ++r) {
    for (int64_t t = count; t < kBlockTokens; ++t) s[r][t] = -INFINITY;
    double tile_max = s[r][0];
    for (int t = 1; t < kBlockTokens; ++t) tile_max = s[r][t] > tile_max ? s[r][t] : tile_max;
    double m = state_m(states[r], d), l = state_l(states[r], d);
    if (tile_max > m) {
      // Subtracting the running max keeps every p_t <= 1: exp of a raw score
      // overflows float from 88.7 on. The first tile rescales 0 * exp(-inf).
      const float alpha = static_cast<float>(std::exp(m - tile_max));
      m = tile_max;
      l *= alpha;
      for (int64_t x = 0; x < d; ++x) states[r][x] *= alpha;
    }
    // Lanes 8..15 stay -inf, as do keys past count: exp gives 0 for them.
    vfloat x16 = vbroadcast(-INFINITY);
    const vfloat8 shifted = __builtin_convertvector(s[r] - m, vfloat8);
    std::memcpy(&x16, &shifted, sizeof(shifted));
    const vfloat e = vexp(x16);
    std::memcpy(&p[r], &e, sizeof(p[r]));
    for (int t = 0; t < kBlockTokens; ++t) l += p[r][t];
    set_state_ml(states[r], d, m, l);
  }
  int64_t x = 0;
  for (; x + kLanes <= d; x += kLanes) {
    vfloat vt[kBlockTokens];
    for (int64_t t = 0; t < count; ++t) vt[t] = vload(v + t * d + x);
    for (int r = 0; r < R; ++r) {
      vfloat a = vload(states[r] + x);
      for (int64_t t = 0; t < count; ++t) a += p[r][t] * vt[t];
      vstore(states[r] + x, a);
    }
  }
  for (; x < d; ++x)
    for (int r = 0; r < R; ++r) {
      float a = states[r][x];
      for (int64_t t = 0; t < count; ++t) a += p[r][t] * v[t * d + x];
      states[r][x] = a;
    }
}

// The merged state of `count` partial states of one row (`stride` floats
// apart) written as the normalised output row: each part's sums are rescaled
// by exp(m_i - m) to the common max m before they are added.
inline void merge_rows(const float* parts, int64_t count, int64_t stride, int64_t d, float* out) {
  double m = -INFINITY;
  for (int64_t i = 0; i < count; ++i) m = std::fmax(m, state_m(parts + i * stride, d));
  double l = 0.0;
  for (int64_t x = 0; x < d; ++x) out[x] = 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    const float* part = parts + i * stride;
    if (state_l(part, d) == 0.0) continue;  // a split whose keys this row cannot see
    const double w = std::exp(state_m(part, d) - m);
    l += w * state_l(part, d);
    for (int64_t x = 0; x < d; ++x) out[x] += static_cast<float>(w) * part[x];
  }
  const float inv = static_cast<float>(1.0 / l);
  for (int64_t x = 0; x < d; ++x) out[x] *= inv;
}

}  // namespace kvcache::cpu

#endif  // KV_CACHE_CPU_ROW_SOFTMAX_H
