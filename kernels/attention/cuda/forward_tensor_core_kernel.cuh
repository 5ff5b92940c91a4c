// The forward kernel on tensor cores: o and lse of one tile of queries,
// online softmax over tiles of keys (FlashAttention-2), both products
// (Q K^T and P V) as warp-level 3xTF32 mma (mma_tf32.cuh), the softmax in
// float32 registers between them. With SPLIT_KV, K and V are split once as
// they are loaded (operand_tiles.cuh), 32 keys a step so that two blocks
// still fit an SM at dim 128.
#ifndef ATTENTION_CUDA_FORWARD_TENSOR_CORE_KERNEL_CUH
#define ATTENTION_CUDA_FORWARD_TENSOR_CORE_KERNEL_CUH

#include <type_traits>

#include "kernel_args.cuh"
#include "mma_tf32.cuh"
#include "operand_tiles.cuh"
#include "tile_ops.cuh"

namespace attention::cuda::detail {

// Four warps, each 16 query rows of a 64-row tile; 64 keys a step, or 32
// split. Row strides make every fragment load hit 32 distinct banks: Q and
// float K (read row g, column t) at 4 mod 32 floats, float V (read row t,
// column g) at 8 mod 32; split K and V as operand_tiles.cuh lays them out.
template <int DP, bool SPLIT_KV = false>
struct TensorCoreForwardTiles {
  static_assert(DP % 8 == 0 && DP <= 128, "dim padded to 32, 64, 96 or 128");
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kQueries = 16 * kWarps;
  static constexpr int kKeys = SPLIT_KV ? 32 : 64;
  static constexpr int kQStride = DP + 4;
  using KTile = std::conditional_t<SPLIT_KV, SplitTileByRows<kKeys, DP>, FloatTile<kKeys, DP, DP + 4>>;
  using VTile = std::conditional_t<SPLIT_KV, SplitTileByColumns<kKeys, DP>, FloatTile<kKeys, DP, DP + 8>>;
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kQueries * kQStride;
  static constexpr int kV = kK + KTile::kFloats;
  static constexpr int kFloats = kV + VTile::kFloats;
  static constexpr size_t kSharedBytes = sizeof(float) * kFloats;
  static_assert(kK % 4 == 0 && kV % 4 == 0, "tiles 16-byte aligned");
};

// Lanes 4g .. 4g + 3 (a group) hold one row's scores of a tile: its
// reductions are two shuffles.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// One block per (batch, query head, query tile). Lane l of warp w holds rows
// q0 + 16 w + l / 4 and that + 8: its running max m and sum l of each, and
// their output columns 8 n + 2 (l % 4) + {0, 1} (C fragments).
template <int DP, bool SPLIT_KV = false>
__global__ void __launch_bounds__(TensorCoreForwardTiles<DP, SPLIT_KV>::kThreads)
    forward_tensor_core_kernel(const ForwardArgs a) {
  using T = TensorCoreForwardTiles<DP, SPLIT_KV>;
  constexpr int kScoreTiles = T::kKeys / 8;
  constexpr int kOutTiles = DP / 8;
  const Geometry& g = a.g;
  float* const smem = shared_floats();
  float* const qs = smem + T::kQ;
  const typename T::KTile ks{smem + T::kK};
  const typename T::VTile vs{smem + T::kV};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  const QueryTile block = query_tile_of_block(g, T::kQueries);
  const int q0 = block.q0;
  const int64_t bh = block.bh, bkv = block.bkv;
  const float* const k = a.k + bkv * g.n_kv * g.dim;
  const float* const v = a.v + bkv * g.n_kv * g.dim;
  const int kv_end = key_end(g, q0, T::kQueries);

  load_tile<T::kQueries, DP, T::kQStride, T::kThreads>(a.q + bh * g.n_q * g.dim, q0, g.n_q, g.dim, g.vec4, qs);
  const float* const q_warp = qs + 16 * warp * T::kQStride;
  const int row0 = q0 + 16 * warp + lane / 4;  // this lane's rows: row0 and row0 + 8

  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.0f, 0.0f};
  float o[kOutTiles][4];
#pragma unroll
  for (int n = 0; n < kOutTiles; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

  for (int kv0 = 0; kv0 < kv_end; kv0 += T::kKeys) {
    __syncthreads();  // the last step is done with ks and vs
    ks.template load<T::kThreads>(k, kv0, g.n_kv, g.dim, g.vec4);
    vs.template load<T::kThreads>(v, kv0, g.n_kv, g.dim, g.vec4);
    __syncthreads();

    float s[kScoreTiles][4];
#pragma unroll
    for (int j = 0; j < kScoreTiles; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll 2
    for (int d0 = 0; d0 < DP; d0 += 8) {
      float x[4];
      mma::load_a(q_warp, T::kQStride, d0, lane, x);
      const mma::FragA qa = mma::split_a(x);
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j) {
        mma::mma_3xtf32(s[j], qa, ks.b_transposed(8 * j, d0, lane));
      }
    }

#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 8 * h;
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int key = kv0 + 8 * j + mma::c_col(lane, e);
          float& x = s[j][2 * h + e];
          x = visible(g, row, key) ? x * g.scale : -INFINITY;
          tile_max = fmaxf(tile_max, x);
        }
      }
      const float m_new = fmaxf(m[h], quad_max(tile_max));
      // A row that has seen no key yet keeps m = -inf: exponents are then
      // taken against 0, giving exp(-inf) = 0, never exp(-inf + inf) = NaN.
      const float base = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = __expf(m[h] - base);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = s[j][2 * h + e];
          x = __expf(x - base);
          sum += x;
        }
      }
      l[h] = l[h] * alpha + quad_sum(sum);
      m[h] = m_new;
#pragma unroll
      for (int n = 0; n < kOutTiles; ++n) {
        o[n][2 * h] *= alpha;
        o[n][2 * h + 1] *= alpha;
      }
    }

#pragma unroll  // s[j] stays in registers only with j known at compile time
    for (int j = 0; j < kScoreTiles; ++j) {
      float x[4];
      mma::c_as_a(s[j], lane, x);
      const mma::FragA pa = mma::split_a(x);
#pragma unroll
      for (int n = 0; n < kOutTiles; ++n) mma::mma_3xtf32(o[n], pa, vs.b(8 * j, 8 * n, lane));
    }
  }

  float* const out = a.o + bh * g.n_q * g.dim;
  float* const lse = a.lse + bh * g.n_q;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    if (row >= g.n_q) continue;
    // l = 0 exactly when the row saw no key (else its max term is exp(0)).
    const bool seen = l[h] > 0.0f;
    mma::store_c_row(o, h, lane, g.dim, out + static_cast<int64_t>(row) * g.dim,
                     [&](float x) { return seen ? x / l[h] : 0.0f; });
    if (lane % 4 == 0) lse[row] = seen ? m[h] + logf(l[h]) : -INFINITY;
  }
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_FORWARD_TENSOR_CORE_KERNEL_CUH
