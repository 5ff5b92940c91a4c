// The backward kernels: dx and per-block dgamma/dbeta partial rows in one
// read of x and dy, then a small kernel that adds the partial rows up.
#ifndef LAYERNORM_CUDA_BACKWARD_KERNEL_CUH
#define LAYERNORM_CUDA_BACKWARD_KERNEL_CUH

#include "layernorm_backward/row_stats.h"
#include "row_access.cuh"

namespace layernorm::cuda::detail {

// Vectors of x and of dy each thread keeps in registers on the cached path.
constexpr int kBackwardVectorsPerThread = 4;

// Block b owns rows [b * rows_per_block, ...) and all columns; its row groups
// take its rows in turn. Each thread owns the same columns in every row, so
// it accumulates their dgamma/dbeta contributions without any sharing:
//   VPT > 0: in shared memory, one [2, dim] region per row group (dynamic
//            shared memory of kRowsPerBlock * 2 * dim floats), added up in
//            group order into the block's partial row at the end; x and dy of
//            the current row stay in registers between the two passes.
//   VPT == 0 (rows too long, or not enough shared memory): directly in the
//            block's partial row in global memory (L2-resident read-modify-
//            write), and the second pass re-reads the row through L2.
// partials [gridDim.x, 2, dim]: block b's sums of dy * xhat, then of dy.
// Per row: xhat = ((x - k) - m) * rstd with k = x[r, 0] and (m, rstd) saved,
// g = dy * gamma, and dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
// At least 1024 resident threads per SM (<= 64 registers), as the forward.
template <int VEC, int TPR, int VPT>
__global__ void __launch_bounds__(block_threads(TPR), 1024 / block_threads(TPR))
    backward_kernel(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ gamma,
                    const RowStats* __restrict__ saved, int64_t rows, int dim, int64_t rows_per_block,
                    float* __restrict__ dx, float* __restrict__ partials) {
  constexpr bool kCached = VPT > 0;
  constexpr int kThreads = block_threads(TPR);
  constexpr int kRowsPerBlock = kThreads / TPR;
  static_assert(kCached || kRowsPerBlock == 1, "the uncached path is one row group per block");
#ifdef WARP_EMULATION  // built for the host's warp emulator (tests/support/warp_emulation)
  float4* const dynamic_smem = static_cast<float4*>(warp_emulation::dynamic_shared());
#else
  extern __shared__ float4 dynamic_smem[];
#endif
  __shared__ float2 scratch[2][32];

  const int t = threadIdx.x % TPR, group = threadIdx.x / TPR;
  const int nvec = dim / VEC;
  float* block_partial = partials + static_cast<int64_t>(blockIdx.x) * 2 * dim;
  float* acc_dgamma = kCached ? reinterpret_cast<float*>(dynamic_smem) + group * 2 * dim : block_partial;
  float* acc_dbeta = acc_dgamma + dim;
  for_owned<TPR, VPT>(t, nvec, [&](int, int v) {
    const Pack<VEC> zero{};
    *reinterpret_cast<Pack<VEC>*>(acc_dgamma + v * VEC) = zero;
    *reinterpret_cast<Pack<VEC>*>(acc_dbeta + v * VEC) = zero;
  });

  const int64_t begin = static_cast<int64_t>(blockIdx.x) * rows_per_block;
  const int64_t end = begin + rows_per_block < rows ? begin + rows_per_block : rows;
  // The same trip count for every group (shuffles and barriers need all
  // lanes); a group past the block's last row redoes that row, accumulating
  // and storing nothing.
  const int64_t iterations = (end - begin + kRowsPerBlock - 1) / kRowsPerBlock;
  for (int64_t it = 0; it < iterations; ++it) {
    const int64_t wanted = begin + it * kRowsPerBlock + group;
    const bool active = wanted < end;
    const int64_t row = active ? wanted : end - 1;
    const float* xr = x + row * dim;
    const float* dyr = dy + row * dim;
    const float k = __ldg(xr);
    const RowStats s = saved[row];

    // The row from the registers (all loads issued before any use), or
    // through L2 on the uncached path.
    Pack<VEC> xs[kCached ? VPT : 1], dys[kCached ? VPT : 1];
    if constexpr (kCached) {
      for_owned<TPR, VPT>(t, nvec, [&](int i, int v) {
        xs[i] = load<VEC, true>(xr + v * VEC);
        dys[i] = load<VEC, true>(dyr + v * VEC);
      });
    }
    const auto row_at = [&](int i, int v, Pack<VEC>& xp, Pack<VEC>& dp) {
      if constexpr (kCached) {
        (void)v;
        xp = xs[i];
        dp = dys[i];
      } else {
        (void)i;
        xp = load<VEC, false>(xr + v * VEC);
        dp = load<VEC, false>(dyr + v * VEC);
      }
    };

    float sum_g = 0.0f, sum_gx = 0.0f;
    for_owned<TPR, VPT>(t, nvec, [&](int i, int v) {
      Pack<VEC> xp, dp;
      row_at(i, v, xp, dp);
      const Pack<VEC> gp = load<VEC, false>(gamma + v * VEC);
      Pack<VEC> dg;
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const float xhat = ((xp.v[e] - k) - s.shifted_mean) * s.rstd;
        const float g = dp.v[e] * gp.v[e];
        sum_g += g;
        sum_gx += g * xhat;
        dg.v[e] = dp.v[e] * xhat;
      }
      if (active) {
        accumulate<VEC>(acc_dgamma + v * VEC, dg);
        accumulate<VEC>(acc_dbeta + v * VEC, dp);
      }
    });
    group_sum_pair<TPR>(sum_g, sum_gx, scratch[it & 1]);
    const float mean_g = sum_g / static_cast<float>(dim), mean_gx = sum_gx / static_cast<float>(dim);

    float* dxr = dx + row * dim;
    for_owned<TPR, VPT>(t, nvec, [&](int i, int v) {
      Pack<VEC> xp, dp;
      row_at(i, v, xp, dp);
      const Pack<VEC> gp = load<VEC, false>(gamma + v * VEC);
      Pack<VEC> out;
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const float xhat = ((xp.v[e] - k) - s.shifted_mean) * s.rstd;
        // dim == 1: xhat = 0 and g - mean(g) must be exactly 0, which FMA
        // contraction of dp * gp - mean_g would break (the reference is 0).
        out.v[e] = dim == 1 ? 0.0f : s.rstd * ((dp.v[e] * gp.v[e] - mean_g) - xhat * mean_gx);
      }
      if (active) store<VEC>(dxr + v * VEC, out);
    });
  }

  if constexpr (kCached) {
    __syncthreads();
    const float* acc = reinterpret_cast<const float*>(dynamic_smem);
    for (int c = threadIdx.x; c < dim; c += kThreads) {
      float g = 0.0f, b = 0.0f;
      for (int r = 0; r < kRowsPerBlock; ++r) {
        g += acc[r * 2 * dim + c];
        b += acc[r * 2 * dim + dim + c];
      }
      block_partial[c] = g;
      block_partial[dim + c] = b;
    }
  }
}

constexpr int kReduceColumns = 32;
constexpr int kReduceSlices = 8;

// dgamma[c] and dbeta[c]: the sum of the `blocks` partial rows, in double and
// in a fixed order (deterministic). Block (32, 8): x a column of a 32-column
// tile (coalesced), y one of 8 interleaved slices of the partial rows.
__global__ void __launch_bounds__(kReduceColumns* kReduceSlices)
    reduce_partials_kernel(const float* __restrict__ partials, int blocks, int dim, float* __restrict__ dgamma,
                           float* __restrict__ dbeta) {
  __shared__ double sums[2][kReduceSlices][kReduceColumns];
  const int c = blockIdx.x * kReduceColumns + threadIdx.x;
  double g = 0.0, b = 0.0;
  if (c < dim) {
    for (int p = threadIdx.y; p < blocks; p += kReduceSlices) {
      g += partials[(2 * static_cast<int64_t>(p)) * dim + c];
      b += partials[(2 * static_cast<int64_t>(p) + 1) * dim + c];
    }
  }
  sums[0][threadIdx.y][threadIdx.x] = g;
  sums[1][threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < dim) {
    for (int s = 1; s < kReduceSlices; ++s) {
      g += sums[0][s][threadIdx.x];
      b += sums[1][s][threadIdx.x];
    }
    dgamma[c] = static_cast<float>(g);
    dbeta[c] = static_cast<float>(b);
  }
}

}  // namespace layernorm::cuda::detail

#endif  // LAYERNORM_CUDA_BACKWARD_KERNEL_CUH
