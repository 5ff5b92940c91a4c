// The backward on tensor cores: the dq kernel and the dk/dv kernel of
// backward_dq_kernel.cuh and backward_dkv_kernel.cuh, with every product a
// warp-level 3xTF32 mma (mma_tf32.cuh) and p and ds held in C fragments
// between them. Race-free as theirs: each block writes only its own rows,
// the group's query heads summed in a fixed order.
//
// The dk/dv kernel with WITH_DQ is the backward in one pass: it adds each
// step's ds k to dq as well (atomically, into a dq zeroed first), so the
// scores and dout v^T are computed once per pair instead of twice (10 dim
// flops a visible pair where the two kernels take 14), at the price of
// dq's order of sums varying from run to run.
#ifndef ATTENTION_CUDA_BACKWARD_TENSOR_CORE_KERNELS_CUH
#define ATTENTION_CUDA_BACKWARD_TENSOR_CORE_KERNELS_CUH

#include "kernel_args.cuh"
#include "mma_tf32.cuh"
#include "tile_ops.cuh"

namespace attention::cuda::detail {

// Every tile's rows 4 mod 32 floats apart: conflict-free for the fragments
// read row g, column t (A operands and transposed B operands); a B operand
// read row t, column g (k and q as the right factor of ds) takes two ways.
template <int DP>
constexpr int tc_stride() {
  return DP + 4;
}

// Shared memory of dq_tensor_core_kernel<DP>, in floats: the query and dout
// tiles, a key and a value tile, the rows' partial dots, lse and
// D = rowsum(dout * o).
template <int DP>
struct TensorCoreDqTiles {
  static_assert(DP % 8 == 0 && DP <= 128, "dim padded to 32, 64, 96 or 128");
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kQueries = 16 * kWarps;
  static constexpr int kKeys = 64;
  static constexpr int kStride = tc_stride<DP>();
  static constexpr int kQ = 0;
  static constexpr int kDout = kQ + kQueries * kStride;
  static constexpr int kK = kDout + kQueries * kStride;
  static constexpr int kV = kK + kKeys * kStride;
  static constexpr int kPartial = kV + kKeys * kStride;
  static constexpr int kLse = kPartial + kQueries * (DP / 32);
  static constexpr int kD = kLse + kQueries;
  static constexpr int kFloats = kD + kQueries;
  static constexpr size_t kSharedBytes = sizeof(float) * kFloats;
};

// Shared memory of dkv_tensor_core_kernel<DP, WITH_DQ>: the key and value
// tiles, a query and a dout tile, the query rows' partial dots, lse and D,
// and with WITH_DQ a step's ds [queries x keys] (rows 4 mod 32 floats
// apart: its A fragments and its C-fragment stores are conflict-free).
template <int DP, bool WITH_DQ = false>
struct TensorCoreDkvTiles {
  static_assert(DP % 8 == 0 && DP <= 128, "dim padded to 32, 64, 96 or 128");
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kKeys = 16 * kWarps;
  static constexpr int kQueries = 32;
  static constexpr int kStride = tc_stride<DP>();
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKeys * kStride;
  static constexpr int kQ = kV + kKeys * kStride;
  static constexpr int kDout = kQ + kQueries * kStride;
  static constexpr int kPartial = kDout + kQueries * kStride;
  static constexpr int kLse = kPartial + kQueries * (DP / 32);
  static constexpr int kD = kLse + kQueries;
  static constexpr int kDsStride = kKeys + 4;
  static constexpr int kDs = kD + kQueries;
  static constexpr int kFloats = kDs + (WITH_DQ ? kQueries * kDsStride : 0);
  static constexpr size_t kSharedBytes = sizeof(float) * kFloats;
};

// acc[j] += A B^T over DP: A the 16 rows of `a` (a warp's rows), B^T the
// columns 8 j .. 8 j + 7 being rows of `b`: acc is [16 x 8 TILES].
template <int TILES, int DP, int STRIDE>
__device__ __forceinline__ void warp_dot_rows(const float* a, const float* b, int lane, float (&acc)[TILES][4]) {
#pragma unroll
  for (int j = 0; j < TILES; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll 2
  for (int d0 = 0; d0 < DP; d0 += 8) {
    float x[4];
    mma::load_a(a, STRIDE, d0, lane, x);
    const mma::FragA fa = mma::split_a(x);
#pragma unroll
    for (int j = 0; j < TILES; ++j) mma::mma_3xtf32(acc[j], fa, mma::load_b_transposed(b, STRIDE, 8 * j, d0, lane));
  }
}

// out[n] += W M over the 8 TILES columns of W: W in C fragments [16 x 8
// TILES], M the row-major [8 TILES, DP] tile `m`: out is [16 x DP].
template <int TILES, int DP, int STRIDE>
__device__ __forceinline__ void warp_accumulate(const float (&w)[TILES][4], const float* m, int lane,
                                                float (&out)[DP / 8][4]) {
#pragma unroll
  for (int j = 0; j < TILES; ++j) {
    float x[4];
    mma::c_as_a(w[j], lane, x);
    const mma::FragA fa = mma::split_a(x);
#pragma unroll
    for (int n = 0; n < DP / 8; ++n) mma::mma_3xtf32(out[n], fa, mma::load_b(m, STRIDE, 8 * j, 8 * n, lane));
  }
}

// One block per (batch, query head, query tile), four warps of 16 rows.
// Per step of keys:  p = exp(scale q k^T - lse) (0 where masked),
// ds = p (dout v^T - D), dq += ds k; dq times scale at the end.
template <int DP>
__global__ void __launch_bounds__(TensorCoreDqTiles<DP>::kThreads) dq_tensor_core_kernel(const BackwardArgs a) {
  using T = TensorCoreDqTiles<DP>;
  constexpr int kScoreTiles = T::kKeys / 8;
  constexpr int kOutTiles = DP / 8;
  const Geometry& g = a.g;
  float* const smem = shared_floats();
  float* const qs = smem + T::kQ;
  float* const dos = smem + T::kDout;
  float* const ks = smem + T::kK;
  float* const vs = smem + T::kV;
  float* const lse_s = smem + T::kLse;
  float* const d_s = smem + T::kD;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  const QueryTile block = query_tile_of_block(g, T::kQueries);
  const int q0 = block.q0;
  const int64_t bh = block.bh, bkv = block.bkv;
  const float* const k = a.k + bkv * g.n_kv * g.dim;
  const float* const v = a.v + bkv * g.n_kv * g.dim;
  const int kv_end = key_end(g, q0, T::kQueries);

  load_tile<T::kQueries, DP, T::kStride, T::kThreads>(a.q + bh * g.n_q * g.dim, q0, g.n_q, g.dim, g.vec4, qs);
  load_tile<T::kQueries, DP, T::kStride, T::kThreads>(a.dout + bh * g.n_q * g.dim, q0, g.n_q, g.dim, g.vec4, dos);
  if (threadIdx.x < T::kQueries) {
    const int row = q0 + static_cast<int>(threadIdx.x);
    lse_s[threadIdx.x] = row < g.n_q ? a.lse[bh * g.n_q + row] : -INFINITY;
  }
  __syncthreads();
  row_dots<T::kQueries, DP, T::kStride, T::kThreads>(dos, a.o + bh * g.n_q * g.dim, q0, g.n_q, g.dim,
                                                     smem + T::kPartial, d_s);
  const int local0 = 16 * warp + lane / 4;  // this lane's rows of the tile: local0 and local0 + 8
  const float row_lse[2] = {lse_s[local0], lse_s[local0 + 8]};
  const float row_d[2] = {d_s[local0], d_s[local0 + 8]};
  const float* const q_warp = qs + 16 * warp * T::kStride;
  const float* const dout_warp = dos + 16 * warp * T::kStride;

  float dq[kOutTiles][4];
#pragma unroll
  for (int n = 0; n < kOutTiles; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.0f;

  for (int kv0 = 0; kv0 < kv_end; kv0 += T::kKeys) {
    __syncthreads();  // the last step is done with ks and vs
    load_tile<T::kKeys, DP, T::kStride, T::kThreads>(k, kv0, g.n_kv, g.dim, g.vec4, ks);
    load_tile<T::kKeys, DP, T::kStride, T::kThreads>(v, kv0, g.n_kv, g.dim, g.vec4, vs);
    __syncthreads();

    float s[kScoreTiles][4], dp[kScoreTiles][4];
    warp_dot_rows<kScoreTiles, DP, T::kStride>(q_warp, ks, lane, s);
    warp_dot_rows<kScoreTiles, DP, T::kStride>(dout_warp, vs, lane, dp);
#pragma unroll
    for (int j = 0; j < kScoreTiles; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int h = r / 2;
        const int row = q0 + local0 + 8 * h;
        // Masked pairs give ds = 0 outright; lse = -inf marks a row that
        // sees no key.
        float ds = 0.0f;
        if (visible(g, row, kv0 + 8 * j + mma::c_col(lane, r)) && row_lse[h] != -INFINITY)
          ds = __expf(s[j][r] * g.scale - row_lse[h]) * (dp[j][r] - row_d[h]);
        s[j][r] = ds;
      }
    }
    warp_accumulate<kScoreTiles, DP, T::kStride>(s, ks, lane, dq);
  }

  float* const out = a.dq + bh * g.n_q * g.dim;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = q0 + local0 + 8 * h;
    if (row >= g.n_q) continue;
    mma::store_c_row(dq, h, lane, g.dim, out + static_cast<int64_t>(row) * g.dim,
                     [&](float x) { return x * g.scale; });
  }
}

// p[0..3] += x[0..3] atomically: one vector reduction where the device has
// it (compute capability 9.0), four scalar ones elsewhere.
__device__ __forceinline__ void atomic_add4(float* p, const float (&x)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(WARP_EMULATION)
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)), "f"(x[0]),
               "f"(x[1]), "f"(x[2]), "f"(x[3])
               : "memory");
#else
#pragma unroll
  for (int e = 0; e < 4; ++e) atomicAdd(p + e, x[e]);
#endif
}

// dq[q0 + i] += scale * sum over the block's keys of ds[i, key] k[key], for
// the step's query tile, ds^T in each warp's C fragments (16 keys x
// queries). The fragments go to shared memory as ds [queries x keys]; each
// warp then takes 16 queries and half of dim's columns, and adds its
// product to dq atomically (other blocks add other keys' terms).
template <int DP, int SCORE_TILES>
__device__ __forceinline__ void add_to_dq(const float (&dst)[SCORE_TILES][4], const float* ks, float* ds_s,
                                          float* dq_rows, int q0, const Geometry& g, int warp, int lane) {
  using T = TensorCoreDkvTiles<DP, true>;
  static_assert(SCORE_TILES * 8 == T::kQueries && T::kQueries == 32 && T::kWarps == 4,
                "two warps a 16-query half, two a half of dim");
#pragma unroll
  for (int j = 0; j < SCORE_TILES; ++j) {
#pragma unroll
    for (int r = 0; r < 4; ++r)
      ds_s[(8 * j + mma::c_col(lane, r)) * T::kDsStride + 16 * warp + mma::c_row(lane, r)] = dst[j][r];
  }
  __syncthreads();
  constexpr int kColumnTiles = DP / 16;
  const int m0 = 16 * (warp % 2), n0 = (warp / 2) * kColumnTiles;
  float acc[kColumnTiles][4];
#pragma unroll
  for (int n = 0; n < kColumnTiles; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll 2
  for (int k0 = 0; k0 < T::kKeys; k0 += 8) {
    float x[4];
    mma::load_a(ds_s + m0 * T::kDsStride, T::kDsStride, k0, lane, x);
    const mma::FragA fa = mma::split_a(x);
#pragma unroll
    for (int n = 0; n < kColumnTiles; ++n)
      mma::mma_3xtf32(acc[n], fa, mma::load_b(ks, T::kStride, k0, 8 * (n0 + n), lane));
  }
  // Lanes 2i and 2i + 1 hold four adjacent columns of two rows between them
  // (C fragments): each sends the other one row's pair, so that the even
  // lane holds its first row's four and the odd lane its second row's, for
  // one vector add each where dq's rows allow it.
  const bool odd = lane % 2 == 1;
  const bool vector = g.dim % 4 == 0 && reinterpret_cast<uintptr_t>(dq_rows) % 16 == 0;
  const int row = q0 + m0 + lane / 4 + (odd ? 8 : 0);
#pragma unroll
  for (int n = 0; n < kColumnTiles; ++n) {
    const float got0 = __shfl_xor_sync(0xffffffffu, odd ? acc[n][0] : acc[n][2], 1);
    const float got1 = __shfl_xor_sync(0xffffffffu, odd ? acc[n][1] : acc[n][3], 1);
    float x[4] = {acc[n][0], acc[n][1], got0, got1};
    if (odd) {
      x[0] = got0;
      x[1] = got1;
      x[2] = acc[n][2];
      x[3] = acc[n][3];
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) x[e] *= g.scale;
    const int col = 8 * (n0 + n) + 4 * (lane % 4 / 2);
    if (row >= g.n_q || col >= g.dim) continue;
    float* const out = dq_rows + static_cast<int64_t>(row) * g.dim + col;
    if (vector) {
      atomic_add4(out, x);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (col + e < g.dim) atomicAdd(out + e, x[e]);
    }
  }
}

// One block per (batch, kv head, key tile), four warps of 16 keys. Per step
// of queries, for each query head of the group in turn:
//   p^T = exp(scale k q^T - lse) (0 where masked), ds^T = p^T (v dout^T - D),
//   dv += p^T dout, dk += ds^T q; dk times scale at the end; with WITH_DQ,
//   dq += scale ds k too (add_to_dq).
// Query tiles that see none of the keys under the causal mask are skipped.
template <int DP, bool WITH_DQ = false>
__global__ void __launch_bounds__(TensorCoreDkvTiles<DP, WITH_DQ>::kThreads)
    dkv_tensor_core_kernel(const BackwardArgs a) {
  using T = TensorCoreDkvTiles<DP, WITH_DQ>;
  constexpr int kScoreTiles = T::kQueries / 8;
  constexpr int kOutTiles = DP / 8;
  const Geometry& g = a.g;
  float* const smem = shared_floats();
  float* const ks = smem + T::kK;
  float* const vs = smem + T::kV;
  float* const qs = smem + T::kQ;
  float* const dos = smem + T::kDout;
  float* const lse_s = smem + T::kLse;
  float* const d_s = smem + T::kD;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  const KeyTile block = key_tile_of_block(g, T::kKeys);
  const int k0 = block.k0;
  const int64_t bkv = block.bkv, bh0 = block.bh0;
  const int q_begin = query_begin(g, k0) / T::kQueries * T::kQueries;

  load_tile<T::kKeys, DP, T::kStride, T::kThreads>(a.k + bkv * g.n_kv * g.dim, k0, g.n_kv, g.dim, g.vec4, ks);
  load_tile<T::kKeys, DP, T::kStride, T::kThreads>(a.v + bkv * g.n_kv * g.dim, k0, g.n_kv, g.dim, g.vec4, vs);
  const int key0 = k0 + 16 * warp + lane / 4;  // this lane's keys: key0 and key0 + 8
  const float* const k_warp = ks + 16 * warp * T::kStride;
  const float* const v_warp = vs + 16 * warp * T::kStride;

  float dk[kOutTiles][4], dv[kOutTiles][4];
#pragma unroll
  for (int n = 0; n < kOutTiles; ++n) {
#pragma unroll
    for (int r = 0; r < 4; ++r) dk[n][r] = dv[n][r] = 0.0f;
  }

  for (int h = 0; h < g.group; ++h) {
    const int64_t bh = bh0 + h;
    const float* const q = a.q + bh * g.n_q * g.dim;
    const float* const dout = a.dout + bh * g.n_q * g.dim;
    const float* const o = a.o + bh * g.n_q * g.dim;
    const float* const lse = a.lse + bh * g.n_q;
    for (int q0 = q_begin; q0 < g.n_q; q0 += T::kQueries) {
      __syncthreads();  // ks and vs are loaded; the last step is done with its tiles
      load_tile<T::kQueries, DP, T::kStride, T::kThreads>(q, q0, g.n_q, g.dim, g.vec4, qs);
      load_tile<T::kQueries, DP, T::kStride, T::kThreads>(dout, q0, g.n_q, g.dim, g.vec4, dos);
      if (threadIdx.x < T::kQueries) {
        const int row = q0 + static_cast<int>(threadIdx.x);
        lse_s[threadIdx.x] = row < g.n_q ? lse[row] : -INFINITY;
      }
      __syncthreads();
      row_dots<T::kQueries, DP, T::kStride, T::kThreads>(dos, o, q0, g.n_q, g.dim, smem + T::kPartial, d_s);

      float pt[kScoreTiles][4], dst[kScoreTiles][4];
      warp_dot_rows<kScoreTiles, DP, T::kStride>(k_warp, qs, lane, pt);
      warp_dot_rows<kScoreTiles, DP, T::kStride>(v_warp, dos, lane, dst);
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int col = 8 * j + mma::c_col(lane, r);
          const int key = key0 + 8 * (r / 2);
          const float row_lse = lse_s[col];
          // As in the dq kernel: masked pairs (and rows that see no key)
          // contribute exact zeros.
          float p = 0.0f, ds = 0.0f;
          if (visible(g, q0 + col, key) && row_lse != -INFINITY) {
            p = __expf(pt[j][r] * g.scale - row_lse);
            ds = p * (dst[j][r] - d_s[col]);
          }
          pt[j][r] = p;
          dst[j][r] = ds;
        }
      }
      warp_accumulate<kScoreTiles, DP, T::kStride>(pt, dos, lane, dv);
      warp_accumulate<kScoreTiles, DP, T::kStride>(dst, qs, lane, dk);
      if constexpr (WITH_DQ) add_to_dq<DP>(dst, ks, smem + T::kDs, a.dq + bh * g.n_q * g.dim, q0, g, warp, lane);
    }
  }

  float* const dk_out = a.dk + bkv * g.n_kv * g.dim;
  float* const dv_out = a.dv + bkv * g.n_kv * g.dim;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int key = key0 + 8 * h;
    if (key >= g.n_kv) continue;
    mma::store_c_row(dk, h, lane, g.dim, dk_out + static_cast<int64_t>(key) * g.dim,
                     [&](float x) { return x * g.scale; });
    mma::store_c_row(dv, h, lane, g.dim, dv_out + static_cast<int64_t>(key) * g.dim, [](float x) { return x; });
  }
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_BACKWARD_TENSOR_CORE_KERNELS_CUH
