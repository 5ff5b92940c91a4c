// The forward kernel: o and lse of one tile of queries, online softmax over
// tiles of keys (FlashAttention-2).
#ifndef ATTENTION_CUDA_FORWARD_KERNEL_CUH
#define ATTENTION_CUDA_FORWARD_KERNEL_CUH

#include "kernel_args.cuh"
#include "tile_ops.cuh"

namespace attention::cuda::detail {

// Shared memory of forward_kernel<DP>, in floats: the query tile, a key and
// a value tile, and the tile's probabilities. Keys per step halve past
// DP = 128 so that DP = 256 still fits an A100's 163 KiB.
template <int DP>
struct ForwardTiles {
  static constexpr int kQueries = 64;
  static constexpr int kKeys = DP <= 128 ? 64 : 32;
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kQueries * tile_stride(DP);
  static constexpr int kV = kK + kKeys * tile_stride(DP);
  static constexpr int kP = kV + kKeys * tile_stride(DP);
  static constexpr int kFloats = kP + kQueries * tile_stride(kKeys);
  static constexpr size_t kSharedBytes = sizeof(float) * kFloats;
};

// One block per (batch, query head, query tile), grid = batch * heads_q *
// tiles. Per thread: 4 query rows, the running max m and sum l of each, and
// its DP / 16 columns of each row's unnormalised output, all in float32.
template <int DP>
__global__ void __launch_bounds__(kThreads) forward_kernel(const ForwardArgs a) {
  using T = ForwardTiles<DP>;
  constexpr int R = T::kQueries / kSide, C = T::kKeys / kSide, kPairs = DP / 32;
  constexpr int kStride = tile_stride(DP), kPStride = tile_stride(T::kKeys);
  const Geometry& g = a.g;
  float* const smem = shared_floats();
  float* const qs = smem + T::kQ;
  float* const ks = smem + T::kK;
  float* const vs = smem + T::kV;
  float* const ps = smem + T::kP;
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;

  const QueryTile block = query_tile_of_block(g, T::kQueries);
  const int q0 = block.q0;
  const int64_t bh = block.bh, bkv = block.bkv;
  const float* const k = a.k + bkv * g.n_kv * g.dim;
  const float* const v = a.v + bkv * g.n_kv * g.dim;
  const int kv_end = key_end(g, q0, T::kQueries);

  load_tile<T::kQueries, DP>(a.q + bh * g.n_q * g.dim, q0, g.n_q, g.dim, g.vec4, qs);

  float m[R], l[R];
  float2 acc[R][kPairs];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) acc[i][p] = make_float2(0.0f, 0.0f);
  }

  for (int kv0 = 0; kv0 < kv_end; kv0 += T::kKeys) {
    __syncthreads();  // the last step is done with ks, vs and ps
    load_tile<T::kKeys, DP>(k, kv0, g.n_kv, g.dim, g.vec4, ks);
    load_tile<T::kKeys, DP>(v, kv0, g.n_kv, g.dim, g.vec4, vs);
    __syncthreads();

    float s[R][C];
    tile_dot<R, C, DP>(qs + ty * kStride, ks + tx * kStride, s);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int row = q0 + ty + kSide * i;
      float tile_max = -INFINITY;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        s[i][c] = visible(g, row, kv0 + tx + kSide * c) ? s[i][c] * g.scale : -INFINITY;
        tile_max = fmaxf(tile_max, s[i][c]);
      }
      const float m_new = fmaxf(m[i], half_warp_max(tile_max));
      // A row that has seen no key yet keeps m = -inf: exponents are then
      // taken against 0, giving exp(-inf) = 0, never exp(-inf + inf) = NaN.
      const float base = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = __expf(m[i] - base);
      float sum = 0.0f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const float p = __expf(s[i][c] - base);
        ps[(ty + kSide * i) * kPStride + tx + kSide * c] = p;
        sum += p;
      }
      l[i] = l[i] * alpha + half_warp_sum(sum);
      m[i] = m_new;
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        acc[i][p].x *= alpha;
        acc[i][p].y *= alpha;
      }
    }
    __syncthreads();
    tile_accumulate<R, T::kKeys, DP>(ps + ty * kPStride, vs + 2 * tx, acc);
  }

  float* const o = a.o + bh * g.n_q * g.dim;
  float* const lse = a.lse + bh * g.n_q;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int row = q0 + ty + kSide * i;
    if (row >= g.n_q) continue;
    // l = 0 exactly when the row saw no key (else its max term is exp(0)).
    const bool seen = l[i] > 0.0f;
    float* const o_row = o + static_cast<int64_t>(row) * g.dim;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const int col = 32 * p + 2 * tx;
      if (col < g.dim) o_row[col] = seen ? acc[i][p].x / l[i] : 0.0f;
      if (col + 1 < g.dim) o_row[col + 1] = seen ? acc[i][p].y / l[i] : 0.0f;
    }
    if (tx == 0) lse[row] = seen ? m[i] + logf(l[i]) : -INFINITY;
  }
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_FORWARD_KERNEL_CUH
