// A plausible single-threaded tiled CPU attention, the common source of the
// CPU mutants. Each mutant's submission.json defines one MUTANT_* macro that
// switches on one realistic bug; with none defined the implementation is
// correct (it is never shipped that way: cpu-fast and cpu-naive are).
//
// Design, FlashAttention's on one thread, in float:
//   forward:  per (batch, query head), blocks of kTile queries walk the key
//             tiles of kTile keys with a running row max m, a running sum l
//             and an accumulator of p v, both rescaled by exp(m_old - m_new)
//             whenever a tile raises the max; o = acc / l, lse = m + log(l).
//   backward: per query head, p is recomputed from the given lse (no softmax
//             again), D_i = rowsum(dout * o), dS = p * (dP - D); dq adds up
//             over the key tiles, and each key tile's dk, dv partials are
//             added into the kv head's dk, dv, so that the query heads of a
//             group sum there.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "abi_support.h"

namespace {

constexpr int64_t kTile = 64;
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

struct Dims {
  int64_t heads_q, heads_kv, n_q, n_kv, dim;
  float scale;
  bool causal;

  // The kv head of query head bh (batch-major over batch * heads_q).
  int64_t kv_head(int64_t bh) const { return bh / heads_q * heads_kv + bh % heads_q / (heads_q / heads_kv); }

  // Keys 0 .. visible(i) - 1 are those query i sees; non-decreasing in i.
  int64_t visible(int64_t i) const {
    if (!causal) return n_kv;
#if defined(MUTANT_CAUSAL_OFF_BY_ONE)
    // Bug: the mask is written j < i + (n_kv - n_q), a strict comparison, so
    // a query never sees the key on its own (bottom-right) diagonal.
    const int64_t count = i + n_kv - n_q;
#elif defined(MUTANT_CAUSAL_TOP_LEFT)
    // Bug: the mask is aligned at the top left (j <= i), as for n_q == n_kv,
    // where both alignments agree; they differ whenever n_q != n_kv.
    const int64_t count = i + 1;
#else
    const int64_t count = i + (n_kv - n_q) + 1;
#endif
    return std::clamp<int64_t>(count, 0, n_kv);
  }

  // How many key tiles the loops walk.
  int64_t key_tiles() const {
#ifdef MUTANT_TILE_TAIL_DROPPED
    // Bug: the tile count is rounded down, as if n_kv came padded to a whole
    // tile; only a short sequence (one partial tile) is special-cased, so
    // the keys after the last full tile are never read when n_kv > kTile.
    return n_kv > kTile ? n_kv / kTile : 1;
#else
    return (n_kv + kTile - 1) / kTile;
#endif
  }
};

// a * b, as every product of the kernel forms it.
float mul(float a, float b) {
#ifdef MUTANT_TF32_PRODUCTS
  // Bug: both factors rounded to TF32 (10 explicit mantissa bits, to
  // nearest) before the product, as by one TF32 tensor-core pass or a
  // framework's "allow TF32" switch, where 3xTF32 would split each into two
  // TF32 terms: each product is then good to about 2^-11 instead of 2^-24.
  auto tf32 = [](float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
    std::memcpy(&x, &bits, sizeof x);
    return x;
  };
  return tf32(a) * tf32(b);
#else
  return a * b;
#endif
}

float dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t d = 0; d < n; ++d) sum += mul(a[d], b[d]);
  return sum;
}

// o and lse of one query head, q [n_q, dim] over k, v [n_kv, dim].
void forward_head(const Dims& s, const float* q, const float* k, const float* v, float* o, float* lse) {
  const int64_t dim = s.dim, tiles = s.key_tiles();
  // Per row of the query block: running max, running sum, accumulator of
  // p v; per tile: the row's scores, then the tile's own p v.
  std::vector<float> m(kTile), l(kTile), acc(static_cast<size_t>(kTile * dim)), scores(kTile), tile_acc(dim);
  for (int64_t q0 = 0; q0 < s.n_q; q0 += kTile) {
    const int64_t rows = std::min(kTile, s.n_q - q0);
    std::fill(m.begin(), m.end(), kMinusInf);
    std::fill(l.begin(), l.end(), 0.0f);
    std::fill(acc.begin(), acc.end(), 0.0f);
    // The block's last row sees the most keys: tiles past them are skipped.
    const int64_t block_keys = s.visible(q0 + rows - 1);
    for (int64_t t = 0; t < tiles && t * kTile < block_keys; ++t) {
      const int64_t j0 = t * kTile, j1 = std::min(s.n_kv, j0 + kTile);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t end = std::min(j1, s.visible(q0 + r));
        if (end <= j0) continue;  // none of this tile is visible to the row: m stays, no -inf - -inf
        const float* qi = q + (q0 + r) * dim;
        float tile_max = kMinusInf;
        for (int64_t j = j0; j < end; ++j) {
          scores[j - j0] = s.scale * dot(qi, k + j * dim, dim);
          tile_max = std::max(tile_max, scores[j - j0]);
        }
        const float m_new = std::max(m[r], tile_max);
        float tile_sum = 0.0f;
        std::fill(tile_acc.begin(), tile_acc.end(), 0.0f);
        for (int64_t j = j0; j < end; ++j) {
          const float p = std::exp(scores[j - j0] - m_new);
          tile_sum += p;
          for (int64_t d = 0; d < dim; ++d) tile_acc[d] += mul(p, v[j * dim + d]);
        }
        float* a = acc.data() + r * dim;
#ifdef MUTANT_NO_RESCALE
        // Bug: the running max moves to m_new, but what l and acc hold is
        // still relative to the old max: they are not rescaled by
        // exp(m_old - m_new). Right while the max never rises after the
        // first tile; a rise by 1000 leaves the old tiles 1000 nats too big.
        l[r] += tile_sum;
        for (int64_t d = 0; d < dim; ++d) a[d] += tile_acc[d];
#else
        const float alpha = std::exp(m[r] - m_new);  // 0 on the row's first tile (m = -inf)
        l[r] = l[r] * alpha + tile_sum;
        for (int64_t d = 0; d < dim; ++d) a[d] = a[d] * alpha + tile_acc[d];
#endif
        m[r] = m_new;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* out = o + (q0 + r) * dim;
      if (l[r] == 0.0f) {
        // A row that sees no key (causal, n_q > n_kv): o = 0, lse = -inf.
        std::fill(out, out + dim, 0.0f);
        lse[q0 + r] = kMinusInf;
        continue;
      }
      const float inv = 1.0f / l[r];
      for (int64_t d = 0; d < dim; ++d) out[d] = acc[r * dim + d] * inv;
#ifdef MUTANT_LSE_MAX_ONLY
      // Bug: the row max is saved as the lse, the log(l) term forgotten (as
      // if the backward took m and l apart): right only where one key
      // holds all of a row's weight.
      lse[q0 + r] = m[r];
#else
      lse[q0 + r] = m[r] + std::log(l[r]);
#endif
    }
  }
}

harness_status forward(const float* q, const float* k, const float* v, int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t n_q, int64_t n_kv, int64_t dim, float scale, int32_t causal, float* o, float* lse,
                       void* /*stream*/) {
  const Dims s{heads_q, heads_kv, n_q, n_kv, dim, scale, causal != 0};
  for (int64_t bh = 0; bh < batch * heads_q; ++bh) {
    const int64_t kv = s.kv_head(bh);
    forward_head(s, q + bh * n_q * dim, k + kv * n_kv * dim, v + kv * n_kv * dim, o + bh * n_q * dim, lse + bh * n_q);
  }
  return HARNESS_STATUS_OK;
}

harness_status backward(const float* q, const float* k, const float* v, const float* o, const float* lse,
                        const float* dout, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv,
                        int64_t dim, float scale, int32_t causal, float* dq, float* dk, float* dv, void* /*stream*/) {
  const Dims s{heads_q, heads_kv, n_q, n_kv, dim, scale, causal != 0};
  const int64_t tiles = s.key_tiles();
  // Zeroed once for every kv head: the query heads of a group add into them.
  std::fill(dk, dk + batch * heads_kv * n_kv * dim, 0.0f);
  std::fill(dv, dv + batch * heads_kv * n_kv * dim, 0.0f);
  std::vector<float> row_term(static_cast<size_t>(n_q));
  std::vector<float> dk_tile(static_cast<size_t>(kTile * dim)), dv_tile(dk_tile.size());
  for (int64_t bh = 0; bh < batch * heads_q; ++bh) {
    const int64_t kv = s.kv_head(bh);
    const float* qh = q + bh * n_q * dim;
    const float* gh = dout + bh * n_q * dim;
    const float* lh = lse + bh * n_q;
    const float* kh = k + kv * n_kv * dim;
    const float* vh = v + kv * n_kv * dim;
    float* dqh = dq + bh * n_q * dim;
    std::fill(dqh, dqh + n_q * dim, 0.0f);  // rows that see no key keep dq = 0
    for (int64_t i = 0; i < n_q; ++i) row_term[i] = dot(gh + i * dim, o + (bh * n_q + i) * dim, dim);
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t j0 = t * kTile, j1 = std::min(n_kv, j0 + kTile);
      std::fill(dk_tile.begin(), dk_tile.end(), 0.0f);
      std::fill(dv_tile.begin(), dv_tile.end(), 0.0f);
      for (int64_t i = 0; i < n_q; ++i) {
        const int64_t end = std::min(j1, s.visible(i));
        if (end <= j0) continue;  // also every row with lse = -inf: exp(s - lse) is never formed
        const float* qi = qh + i * dim;
        const float* gi = gh + i * dim;
        float* dqi = dqh + i * dim;
        for (int64_t j = j0; j < end; ++j) {
          const float* kj = kh + j * dim;
          const float p = std::exp(scale * dot(qi, kj, dim) - lh[i]);
          const float dp = dot(gi, vh + j * dim, dim);
#ifdef MUTANT_NO_ROWSUM_TERM
          // Bug: dS = P * dP, the softmax's Jacobian taken as diagonal: the
          // - rowsum(dout * o) term is dropped.
          const float ds = p * dp;
#else
          const float ds = p * (dp - row_term[i]);
#endif
          float* dkj = dk_tile.data() + (j - j0) * dim;
          float* dvj = dv_tile.data() + (j - j0) * dim;
          for (int64_t d = 0; d < dim; ++d) {
            dqi[d] += scale * mul(ds, kj[d]);
            dkj[d] += scale * mul(ds, qi[d]);
            dvj[d] += mul(p, gi[d]);
          }
        }
      }
      float* dk_out = dk + (kv * n_kv + j0) * dim;
      float* dv_out = dv + (kv * n_kv + j0) * dim;
      for (int64_t e = 0; e < (j1 - j0) * dim; ++e) {
#ifdef MUTANT_GQA_NOT_SUMMED
        // Bug: the store of the one-query-head-per-kv-head version was kept:
        // each query head of a group overwrites the tile's dk, dv, so only
        // the group's last head reaches them. Right whenever heads_q ==
        // heads_kv.
        dk_out[e] = dk_tile[e];
        dv_out[e] = dv_tile[e];
#else
        dk_out[e] += dk_tile[e];
        dv_out[e] += dv_tile[e];
#endif
      }
    }
  }
  return HARNESS_STATUS_OK;
}

}  // namespace

ATTENTION_EXPORT_ABI(forward, backward)
