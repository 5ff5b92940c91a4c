// The backward's dk/dv kernel: dk and dv of one tile of keys, summed over the
// query heads of its kv head and the query tiles that see it. Each block
// writes only its own keys: no races, no atomics, a fixed order of sums.
#ifndef ATTENTION_CUDA_BACKWARD_DKV_KERNEL_CUH
#define ATTENTION_CUDA_BACKWARD_DKV_KERNEL_CUH

#include "kernel_args.cuh"
#include "tile_ops.cuh"

namespace attention::cuda::detail {

// Shared memory of dkv_kernel<DP>, in floats: the key and value tiles, a
// query and a dout tile, the step's p^T and ds^T, then the query rows'
// partial dots, lse and D = rowsum(dout * o). 32 queries a step (and 32 keys
// past DP = 128) keep it within an A100's 163 KiB.
template <int DP>
struct DkvTiles {
  static constexpr int kKeys = DP <= 128 ? 64 : 32;
  static constexpr int kQueries = 32;
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKeys * tile_stride(DP);
  static constexpr int kQ = kV + kKeys * tile_stride(DP);
  static constexpr int kDout = kQ + kQueries * tile_stride(DP);
  static constexpr int kPt = kDout + kQueries * tile_stride(DP);
  static constexpr int kDst = kPt + kKeys * tile_stride(kQueries);
  static constexpr int kPartial = kDst + kKeys * tile_stride(kQueries);
  static constexpr int kLse = kPartial + kQueries * (DP / 32);
  static constexpr int kD = kLse + kQueries;
  static constexpr int kFloats = kD + kQueries;
  static constexpr size_t kSharedBytes = sizeof(float) * kFloats;
};

// One block per (batch, kv head, key tile); its threads own rows of keys
// (ty + 16 i) and columns of queries (tx + 16 c) of the transposed scores.
// Per step of queries, for each query head of the group in turn:
//   p^T  = exp(scale * k q^T - lse), 0 where masked
//   ds^T = p^T * (v dout^T - D)
//   dv += p^T dout,  dk += ds^T q   (dk times scale at the end)
// D is recomputed per step from dout and o (no scratch). Query tiles that
// see none of the keys under the causal mask are skipped.
template <int DP>
__global__ void __launch_bounds__(kThreads) dkv_kernel(const BackwardArgs a) {
  using T = DkvTiles<DP>;
  constexpr int R = T::kKeys / kSide, C = T::kQueries / kSide, kPairs = DP / 32;
  constexpr int kStride = tile_stride(DP), kPStride = tile_stride(T::kQueries);
  const Geometry& g = a.g;
  float* const smem = shared_floats();
  float* const ks = smem + T::kK;
  float* const vs = smem + T::kV;
  float* const qs = smem + T::kQ;
  float* const dos = smem + T::kDout;
  float* const pts = smem + T::kPt;
  float* const dsts = smem + T::kDst;
  float* const lse_s = smem + T::kLse;
  float* const d_s = smem + T::kD;
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;

  const KeyTile block = key_tile_of_block(g, T::kKeys);
  const int k0 = block.k0;
  const int64_t bkv = block.bkv, bh0 = block.bh0;
  const int q_begin = query_begin(g, k0) / T::kQueries * T::kQueries;

  load_tile<T::kKeys, DP>(a.k + bkv * g.n_kv * g.dim, k0, g.n_kv, g.dim, g.vec4, ks);
  load_tile<T::kKeys, DP>(a.v + bkv * g.n_kv * g.dim, k0, g.n_kv, g.dim, g.vec4, vs);

  float2 acc_k[R][kPairs], acc_v[R][kPairs];
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int p = 0; p < kPairs; ++p) acc_k[i][p] = acc_v[i][p] = make_float2(0.0f, 0.0f);
  }

  for (int h = 0; h < g.group; ++h) {
    const int64_t bh = bh0 + h;  // batch * heads_q + query head
    const float* const q = a.q + bh * g.n_q * g.dim;
    const float* const dout = a.dout + bh * g.n_q * g.dim;
    const float* const o = a.o + bh * g.n_q * g.dim;
    const float* const lse = a.lse + bh * g.n_q;
    for (int q0 = q_begin; q0 < g.n_q; q0 += T::kQueries) {
      __syncthreads();  // ks and vs are loaded; the last step is done with its tiles
      load_tile<T::kQueries, DP>(q, q0, g.n_q, g.dim, g.vec4, qs);
      load_tile<T::kQueries, DP>(dout, q0, g.n_q, g.dim, g.vec4, dos);
      if (threadIdx.x < T::kQueries) {
        const int row = q0 + static_cast<int>(threadIdx.x);
        lse_s[threadIdx.x] = row < g.n_q ? lse[row] : -INFINITY;
      }
      __syncthreads();
      row_dots<T::kQueries, DP>(dos, o, q0, g.n_q, g.dim, smem + T::kPartial, d_s);

      float st[R][C], dpt[R][C];
      tile_dot<R, C, DP>(ks + ty * kStride, qs + tx * kStride, st);
      tile_dot<R, C, DP>(vs + ty * kStride, dos + tx * kStride, dpt);
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const int key = k0 + ty + kSide * i;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const int col = tx + kSide * c;
          const float row_lse = lse_s[col];
          // As in dq_kernel: masked pairs (and rows that see no key, lse =
          // -inf) contribute exact zeros.
          float p = 0.0f, ds = 0.0f;
          if (visible(g, q0 + col, key) && row_lse != -INFINITY) {
            p = __expf(st[i][c] * g.scale - row_lse);
            ds = p * (dpt[i][c] - d_s[col]);
          }
          pts[(ty + kSide * i) * kPStride + col] = p;
          dsts[(ty + kSide * i) * kPStride + col] = ds;
        }
      }
      __syncthreads();
      tile_accumulate<R, T::kQueries, DP>(pts + ty * kPStride, dos + 2 * tx, acc_v);
      tile_accumulate<R, T::kQueries, DP>(dsts + ty * kPStride, qs + 2 * tx, acc_k);
    }
  }

  float* const dk = a.dk + bkv * g.n_kv * g.dim;
  float* const dv = a.dv + bkv * g.n_kv * g.dim;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int key = k0 + ty + kSide * i;
    if (key >= g.n_kv) continue;
    float* const dk_row = dk + static_cast<int64_t>(key) * g.dim;
    float* const dv_row = dv + static_cast<int64_t>(key) * g.dim;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const int col = 32 * p + 2 * tx;
      if (col < g.dim) {
        dk_row[col] = acc_k[i][p].x * g.scale;
        dv_row[col] = acc_v[i][p].x;
      }
      if (col + 1 < g.dim) {
        dk_row[col + 1] = acc_k[i][p].y * g.scale;
        dv_row[col + 1] = acc_v[i][p].y;
      }
    }
  }
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_BACKWARD_DKV_KERNEL_CUH
