// Shared-memory tiles read as the B operands of 3xTF32 products, in layouts
// behind one interface, so that a kernel picks its layout by type:
//
// - FloatTile: plain floats, each B fragment split into (hi, lo) as a warp
//   reads it: six instructions of splitting a fragment, every time any
//   warp reads it. Read either way (b and b_transposed).
// - SplitTileByRows and SplitTileByColumns: split once as the block loads
//   the tile, hi and lo in tiles of their own (twice the shared memory), so
//   a fragment is two 64-bit loads and nothing else. A B fragment's two
//   registers must be adjacent: each 64-bit word holds the two values one
//   lane puts in them (elements t and t + 4 of a group of eight), which
//   fixes the direction the tile is read in. ByRows holds a row-major
//   [rows x DP] tile M read as M^T (b_transposed: columns d and d + 4 of a
//   row paired); ByColumns one read as M (b: rows r and r + 4 paired).
//
// Every fragment read is free of bank conflicts. A 64-bit load is served
// by half-warps, whose 16 lanes (g = 0..3 or 4..7, t = 0..3) must read 16
// distinct words modulo 16: ByRows' rows are 4 mod 16 words apart (4 g + t),
// ByColumns' words are in order of (group of 8 rows, column, t) (4 g + t).
#ifndef ATTENTION_CUDA_OPERAND_TILES_CUH
#define ATTENTION_CUDA_OPERAND_TILES_CUH

#include <cstdint>

#include "mma_tf32.cuh"
#include "tile_ops.cuh"

namespace attention::cuda::detail {

// A [ROWS x DP] tile of floats, rows STRIDE floats apart.
template <int ROWS, int DP, int STRIDE>
struct FloatTile {
  static constexpr int kFloats = ROWS * STRIDE;
  float* p;

  template <int THREADS>
  __device__ __forceinline__ void load(const float* __restrict__ src, int row0, int n, int dim, bool vec4) const {
    load_tile<ROWS, DP, STRIDE, THREADS>(src, row0, n, dim, vec4, p);
  }
  // B = M^T for the tile M: rows k0..k0+7 of B (M's columns), its columns
  // n0..n0+7 (M's rows).
  __device__ __forceinline__ mma::FragB b_transposed(int n0, int k0, int lane) const {
    return mma::load_b_transposed(p, STRIDE, n0, k0, lane);
  }
  // B = M: rows k0..k0+7, columns n0..n0+7.
  __device__ __forceinline__ mma::FragB b(int k0, int n0, int lane) const {
    return mma::load_b(p, STRIDE, k0, n0, lane);
  }
};

// Element (row, c) of a row-major [n, dim] matrix, 0 past row n or column dim.
__device__ __forceinline__ float element_or_zero(const float* __restrict__ src, int row, int c, int n, int dim) {
  return row < n && c < dim ? src[static_cast<int64_t>(row) * dim + c] : 0.0f;
}

// Elements (row, c .. c + 3), c a multiple of 4, the same way: one float4
// load where vec4 (dim % 4 == 0, src 16-byte aligned).
__device__ __forceinline__ float4 quad_or_zero(const float* __restrict__ src, int row, int c, int n, int dim,
                                               bool vec4) {
  if (vec4) {
    if (row < n && c < dim) return *reinterpret_cast<const float4*>(src + static_cast<int64_t>(row) * dim + c);
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  return make_float4(element_or_zero(src, row, c, n, dim), element_or_zero(src, row, c + 1, n, dim),
                     element_or_zero(src, row, c + 2, n, dim), element_or_zero(src, row, c + 3, n, dim));
}

// Words t = 0..3 of hi and of lo (16-byte aligned) from eight values:
// word t pairs x[t] with x[t + 4].
__device__ __forceinline__ void store_split_pairs(const float (&x)[8], uint2* hi, uint2* lo) {
  mma::Split s[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) s[e] = mma::split(x[e]);
  uint4* const h = reinterpret_cast<uint4*>(hi);
  uint4* const l = reinterpret_cast<uint4*>(lo);
  h[0] = uint4{s[0].hi, s[4].hi, s[1].hi, s[5].hi};
  h[1] = uint4{s[2].hi, s[6].hi, s[3].hi, s[7].hi};
  l[0] = uint4{s[0].lo, s[4].lo, s[1].lo, s[5].lo};
  l[1] = uint4{s[2].lo, s[6].lo, s[3].lo, s[7].lo};
}

// Read as M^T. Word w of a row holds its columns 8 (w / 4) + w % 4 and
// that + 4; rows kWords apart.
template <int ROWS, int DP>
struct SplitTileByRows {
  static constexpr int kWords = DP / 2 + 4;
  static_assert(kWords % 16 == 4, "rows 4 mod 16 words apart");
  static constexpr int kHalf = ROWS * kWords;    // words of hi, then as many of lo
  static constexpr int kFloats = 2 * 2 * kHalf;  // 16-byte aligned p
  float* p;

  // A thread per (row, group of eight columns).
  template <int THREADS>
  __device__ __forceinline__ void load(const float* __restrict__ src, int row0, int n, int dim, bool vec4) const {
    constexpr int kGroups = DP / 8;
    uint2* const hi = reinterpret_cast<uint2*>(p);
    for (int idx = threadIdx.x; idx < ROWS * kGroups; idx += THREADS) {
      const int r = idx / kGroups, c = idx % kGroups * 8;
      const float4 a = quad_or_zero(src, row0 + r, c, n, dim, vec4);
      const float4 b = quad_or_zero(src, row0 + r, c + 4, n, dim, vec4);
      const float x[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
      const int word = r * kWords + c / 2;
      store_split_pairs(x, hi + word, hi + kHalf + word);
    }
  }
  __device__ __forceinline__ mma::FragB b_transposed(int n0, int k0, int lane) const {
    // The lane's part first, so that the rest is a constant offset in unrolled loops.
    const uint2* const lanes = reinterpret_cast<const uint2*>(p) + mma::b_col(lane) * kWords + lane % 4;
    const int word = n0 * kWords + k0 / 2;
    const uint2 h = lanes[word], l = lanes[kHalf + word];
    return mma::FragB{{h.x, h.y}, {l.x, l.y}};
  }
};

// Read as M. Words in order of (group of eight rows, column, t), word t
// holding rows t and t + 4 of its group.
template <int ROWS, int DP>
struct SplitTileByColumns {
  static_assert(ROWS % 8 == 0, "whole groups of eight rows");
  static constexpr int kHalf = ROWS * DP / 2;    // words of hi, then as many of lo
  static constexpr int kFloats = 2 * 2 * kHalf;  // 16-byte aligned p
  float* p;

  // A thread per (group of eight rows, four columns): eight quads loaded,
  // four columns' words stored.
  template <int THREADS>
  __device__ __forceinline__ void load(const float* __restrict__ src, int row0, int n, int dim, bool vec4) const {
    constexpr int kQuads = DP / 4;
    uint2* const hi = reinterpret_cast<uint2*>(p);
    for (int idx = threadIdx.x; idx < ROWS / 8 * kQuads; idx += THREADS) {
      const int group = idx / kQuads, c = idx % kQuads * 4;
      float x[4][8];  // [column][row]
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float4 v = quad_or_zero(src, row0 + 8 * group + e, c, n, dim, vec4);
        x[0][e] = v.x, x[1][e] = v.y, x[2][e] = v.z, x[3][e] = v.w;
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int word = 4 * (group * DP + c + i);
        store_split_pairs(x[i], hi + word, hi + kHalf + word);
      }
    }
  }
  __device__ __forceinline__ mma::FragB b(int k0, int n0, int lane) const {
    const uint2* const lanes = reinterpret_cast<const uint2*>(p) + 4 * mma::b_col(lane) + lane % 4;
    const int word = 4 * ((k0 / 8) * DP + n0);
    const uint2 h = lanes[word], l = lanes[kHalf + word];
    return mma::FragB{{h.x, h.y}, {l.x, l.y}};
  }
};

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_OPERAND_TILES_CUH
