// The matrix products of the fast CPU attention, on tiles of kTile x kTile
// scores, and the packing that feeds them. A row of dim floats is padded with
// zeros to `ld`, a multiple of kLanes, so that every product runs on whole
// vectors; a transposed tile [dim, kTile] holds one key (or query) per lane.
//
// GCC/Clang vector extensions: -march=native lowers them to AVX-512 or AVX2.
#ifndef ATTENTION_CPU_TILE_PRODUCTS_H
#define ATTENTION_CPU_TILE_PRODUCTS_H

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/vec_math.h"

namespace attention::cpu::detail {

using kernels::common::kLanes;

constexpr int64_t kTile = 64;                 // queries per query tile, keys per key tile
constexpr int kTileVectors = kTile / kLanes;  // one row of a score tile, in vfloats
static_assert(kTile % kLanes == 0, "a tile row is whole vectors");

// The products work on vectors of one machine register (a vfloat of 16 lanes
// is two on AVX2, where GCC then spills the register blocks), in blocks of
// kBlockRows rows by at most kMaxChunk vectors: 16 accumulators of the 32
// AVX-512 registers, 8 of the 16 AVX2 ones.
#if defined(__AVX512F__)
constexpr int kRegLanes = 16;
constexpr int kMaxChunk = 4;
#else
constexpr int kRegLanes = 8;
constexpr int kMaxChunk = 2;
#endif
constexpr int kBlockRows = 4;
typedef float vreg __attribute__((vector_size(kRegLanes * sizeof(float))));
static_assert(kTile % kBlockRows == 0 && kLanes % kRegLanes == 0, "tiles are whole blocks and whole registers");

inline vreg load_reg(const float* p) {
  vreg v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store_reg(float* p, vreg v) { std::memcpy(p, &v, sizeof(v)); }

// Left alone, GCC folds every use of a loaded vector into its FMA as a memory
// operand, loading it once per row of the block: the loads, not the FMAs,
// then bound the products (half the speed measured on AVX-512). An empty asm
// that "changes" v pins it in a register.
inline void in_register(vreg& v) {
#if defined(__AVX__) && (defined(__GNUC__) || defined(__clang__))
  __asm__("" : "+v"(v));
#else
  (void)v;
#endif
}

// dst[r * ld + d] = src[r * dim + d] for r < rows and d < dim, zero elsewhere
// in [kTile, ld): padded rows and columns contribute nothing to a product.
inline void pack_rows(const float* src, int64_t dim, int64_t rows, int64_t ld, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * ld, src + r * dim, static_cast<size_t>(dim) * sizeof(float));
    std::fill(dst + r * ld + dim, dst + (r + 1) * ld, 0.0f);
  }
  std::fill(dst + rows * ld, dst + kTile * ld, 0.0f);
}

// The tile's rows as a [kTile, ld] operand: src itself when it already is one
// (whole tile, dim a multiple of kLanes), else packed into `scratch`.
inline const float* row_operand(const float* src, int64_t dim, int64_t rows, int64_t ld, float* scratch) {
  if (rows == kTile && dim == ld) return src;
  pack_rows(src, dim, rows, ld, scratch);
  return scratch;
}

// dst[d * kTile + r] = src[r * dim + d], missing rows 0: the tile transposed,
// so that a score row is a sum over d of whole vectors. Done once per task.
inline void pack_transposed(const float* src, int64_t dim, int64_t rows, float* dst) {
  for (int64_t d = 0; d < dim; ++d) {
    float* out = dst + d * kTile;
    for (int64_t r = 0; r < rows; ++r) out[r] = src[r * dim + d];
    std::fill(out + rows, out + kTile, 0.0f);
  }
}

// out[r * kTile + c0 + :Chunk registers] = scale * sum_{d < dim} a[r * lda + d] * bt[d * kTile + c0 + :]
template <int Chunk>
inline void scores_chunk(const float* a, int64_t lda, const float* bt, int64_t dim, float scale, float* out) {
  for (int64_t r0 = 0; r0 < kTile; r0 += kBlockRows) {
    vreg acc[kBlockRows][Chunk] = {};
    for (int64_t d = 0; d < dim; ++d) {
      vreg b[Chunk];
      for (int c = 0; c < Chunk; ++c) in_register(b[c] = load_reg(bt + d * kTile + c * kRegLanes));
      for (int r = 0; r < kBlockRows; ++r) {
        const float x = a[(r0 + r) * lda + d];
        for (int c = 0; c < Chunk; ++c) acc[r][c] += x * b[c];
      }
    }
    for (int r = 0; r < kBlockRows; ++r)
      for (int c = 0; c < Chunk; ++c) store_reg(out + (r0 + r) * kTile + c * kRegLanes, acc[r][c] * scale);
  }
}

// out[r * kTile + c] = scale * sum_{d < dim} a[r * lda + d] * bt[d * kTile + c]
// for r, c < kTile: a tile of scores or of dp, rows from `a`, columns from
// the transposed `bt`.
inline void tile_scores(const float* a, int64_t lda, const float* bt, int64_t dim, float scale, float* out) {
  constexpr int kColumns = kMaxChunk * kRegLanes;
  static_assert(kTile % kColumns == 0, "whole chunks of columns");
  for (int64_t c0 = 0; c0 < kTile; c0 += kColumns) scores_chunk<kMaxChunk>(a, lda, bt + c0, dim, scale, out + c0);
}

// How a product's weights are laid out: kTransposed reads w[k * kTile + r]
// (a score tile whose rows are the depth), kRows w[r * kTile + k] (one whose
// rows are the output's).
enum class Weights { kTransposed, kRows };

// c[r * ld + :Chunk registers] += sum_{k < depth} weight(r, k) * b[k * ld + :]
// for r < kTile.
template <int Chunk, Weights Layout>
inline void accumulate_chunk(float* c, const float* w, const float* b, int64_t ld, int64_t depth) {
  const int64_t row_step = Layout == Weights::kRows ? kTile : 1, depth_step = Layout == Weights::kRows ? 1 : kTile;
  for (int64_t r0 = 0; r0 < kTile; r0 += kBlockRows) {
    vreg acc[kBlockRows][Chunk];
    for (int r = 0; r < kBlockRows; ++r)
      for (int v = 0; v < Chunk; ++v) acc[r][v] = load_reg(c + (r0 + r) * ld + v * kRegLanes);
    for (int64_t k = 0; k < depth; ++k) {
      vreg bk[Chunk];
      for (int v = 0; v < Chunk; ++v) in_register(bk[v] = load_reg(b + k * ld + v * kRegLanes));
      for (int r = 0; r < kBlockRows; ++r) {
        const float x = w[k * depth_step + (r0 + r) * row_step];
        for (int v = 0; v < Chunk; ++v) acc[r][v] += x * bk[v];
      }
    }
    for (int r = 0; r < kBlockRows; ++r)
      for (int v = 0; v < Chunk; ++v) store_reg(c + (r0 + r) * ld + v * kRegLanes, acc[r][v]);
  }
}

// c [kTile, ld] += W b over `depth` terms: W [kTile, depth] read from a
// score tile in `Layout`, b [depth, ld] rows, ld = vectors * kLanes. In
// column chunks, so that any dim has a register-blocked path.
template <Weights Layout>
inline void accumulate(float* c, const float* w, const float* b, int64_t depth, int64_t vectors) {
  const int64_t ld = vectors * kLanes, registers = ld / kRegLanes;
  for (int64_t v0 = 0; v0 < registers; v0 += kMaxChunk) {
    float* cc = c + v0 * kRegLanes;
    const float* bb = b + v0 * kRegLanes;
    switch (std::min<int64_t>(kMaxChunk, registers - v0)) {
      case 1: accumulate_chunk<1, Layout>(cc, w, bb, ld, depth); break;
#if defined(__AVX512F__)
      case 3: accumulate_chunk<3, Layout>(cc, w, bb, ld, depth); break;
      case 4: accumulate_chunk<4, Layout>(cc, w, bb, ld, depth); break;
#endif
      default: accumulate_chunk<2, Layout>(cc, w, bb, ld, depth); break;
    }
  }
}

// c += w^T b, w a score tile [depth, kTile]: p^T v into o, p^T dout into dv,
// ds^T q into dk (each with w in the layout that makes it w^T).
inline void tile_accumulate(float* c, const float* w, const float* b, int64_t depth, int64_t vectors) {
  accumulate<Weights::kTransposed>(c, w, b, depth, vectors);
}

// c += w b, w a score tile [kTile, depth]: ds k into dq, from a tile by query.
inline void tile_accumulate_rows(float* c, const float* w, const float* b, int64_t depth, int64_t vectors) {
  accumulate<Weights::kRows>(c, w, b, depth, vectors);
}

}  // namespace attention::cpu::detail

#endif  // ATTENTION_CPU_TILE_PRODUCTS_H
