// The backward's dq kernel: dq of one tile of queries, over the tiles of keys
// its rows see. Each block writes only its own rows: no races, no atomics.
#ifndef ATTENTION_CUDA_BACKWARD_DQ_KERNEL_CUH
#define ATTENTION_CUDA_BACKWARD_DQ_KERNEL_CUH

#include "kernel_args.cuh"
#include "tile_ops.cuh"

namespace attention::cuda::detail {

// Shared memory of dq_kernel<DP>, in floats: the query and dout tiles, a key
// and a value tile, the step's ds, then the rows' partial dots, lse and
// D = rowsum(dout * o). Tiles halve past DP = 128 to fit an A100.
template <int DP>
struct DqTiles {
  static constexpr int kQueries = DP <= 128 ? 64 : 32;
  static constexpr int kKeys = DP <= 128 ? 64 : 32;
  static constexpr int kQ = 0;
  static constexpr int kDout = kQ + kQueries * tile_stride(DP);
  static constexpr int kK = kDout + kQueries * tile_stride(DP);
  static constexpr int kV = kK + kKeys * tile_stride(DP);
  static constexpr int kDs = kV + kKeys * tile_stride(DP);
  static constexpr int kPartial = kDs + kQueries * tile_stride(kKeys);
  static constexpr int kLse = kPartial + kQueries * (DP / 32);
  static constexpr int kD = kLse + kQueries;
  static constexpr int kFloats = kD + kQueries;
  static constexpr size_t kSharedBytes = sizeof(float) * kFloats;
};

// One block per (batch, query head, query tile). Per step of keys:
//   p  = exp(scale * q k^T - lse), 0 where masked
//   ds = p * (dout v^T - D)
//   dq += ds k                      (times scale at the end)
template <int DP>
__global__ void __launch_bounds__(kThreads) dq_kernel(const BackwardArgs a) {
  using T = DqTiles<DP>;
  constexpr int R = T::kQueries / kSide, C = T::kKeys / kSide, kPairs = DP / 32;
  constexpr int kStride = tile_stride(DP), kDsStride = tile_stride(T::kKeys);
  const Geometry& g = a.g;
  float* const smem = shared_floats();
  float* const qs = smem + T::kQ;
  float* const dos = smem + T::kDout;
  float* const ks = smem + T::kK;
  float* const vs = smem + T::kV;
  float* const dss = smem + T::kDs;
  float* const lse_s = smem + T::kLse;
  float* const d_s = smem + T::kD;
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;

  const QueryTile block = query_tile_of_block(g, T::kQueries);
  const int q0 = block.q0;
  const int64_t bh = block.bh, bkv = block.bkv;
  const float* const k = a.k + bkv * g.n_kv * g.dim;
  const float* const v = a.v + bkv * g.n_kv * g.dim;
  const int kv_end = key_end(g, q0, T::kQueries);

  load_tile<T::kQueries, DP>(a.q + bh * g.n_q * g.dim, q0, g.n_q, g.dim, g.vec4, qs);
  load_tile<T::kQueries, DP>(a.dout + bh * g.n_q * g.dim, q0, g.n_q, g.dim, g.vec4, dos);
  if (threadIdx.x < T::kQueries) {
    const int row = q0 + static_cast<int>(threadIdx.x);
    lse_s[threadIdx.x] = row < g.n_q ? a.lse[bh * g.n_q + row] : -INFINITY;
  }
  __syncthreads();
  row_dots<T::kQueries, DP>(dos, a.o + bh * g.n_q * g.dim, q0, g.n_q, g.dim, smem + T::kPartial, d_s);
  float row_lse[R], row_d[R];
  float2 acc[R][kPairs];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    row_lse[i] = lse_s[ty + kSide * i];
    row_d[i] = d_s[ty + kSide * i];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) acc[i][p] = make_float2(0.0f, 0.0f);
  }

  for (int kv0 = 0; kv0 < kv_end; kv0 += T::kKeys) {
    __syncthreads();  // the last step is done with ks, vs and dss
    load_tile<T::kKeys, DP>(k, kv0, g.n_kv, g.dim, g.vec4, ks);
    load_tile<T::kKeys, DP>(v, kv0, g.n_kv, g.dim, g.vec4, vs);
    __syncthreads();

    float s[R][C], dp[R][C];
    tile_dot<R, C, DP>(qs + ty * kStride, ks + tx * kStride, s);
    tile_dot<R, C, DP>(dos + ty * kStride, vs + tx * kStride, dp);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int row = q0 + ty + kSide * i;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        // Masked pairs give ds = 0 outright (not p = 0 times dp - D, which
        // may be inf - inf). lse = -inf marks a row that sees no key.
        float ds = 0.0f;
        if (visible(g, row, kv0 + tx + kSide * c) && row_lse[i] != -INFINITY)
          ds = __expf(s[i][c] * g.scale - row_lse[i]) * (dp[i][c] - row_d[i]);
        dss[(ty + kSide * i) * kDsStride + tx + kSide * c] = ds;
      }
    }
    __syncthreads();
    tile_accumulate<R, T::kKeys, DP>(dss + ty * kDsStride, ks + 2 * tx, acc);
  }

  float* const dq = a.dq + bh * g.n_q * g.dim;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int row = q0 + ty + kSide * i;
    if (row >= g.n_q) continue;
    float* const dq_row = dq + static_cast<int64_t>(row) * g.dim;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const int col = 32 * p + 2 * tx;
      if (col < g.dim) dq_row[col] = acc[i][p].x * g.scale;
      if (col + 1 < g.dim) dq_row[col + 1] = acc[i][p].y * g.scale;
    }
  }
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_BACKWARD_DQ_KERNEL_CUH
