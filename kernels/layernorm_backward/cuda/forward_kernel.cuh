// The forward kernel: statistics, saved state and y of each row in one read
// of x.
#ifndef LAYERNORM_CUDA_FORWARD_KERNEL_CUH
#define LAYERNORM_CUDA_FORWARD_KERNEL_CUH

#include "layernorm_backward/row_stats.h"
#include "row_access.cuh"

namespace layernorm::cuda::detail {

// Vectors of x each thread keeps in registers on the cached path (VPT).
constexpr int kForwardVectorsPerThread = 8;

// One row per row group, kBlock / TPR rows per block, grid = ceil(rows / that).
// VPT > 0: the row stays in registers between the three passes (it must fit:
// dim <= VPT * TPR * VEC). VPT == 0 (rows too long for that): each pass
// re-reads the row through L2, one row per 1024-thread block.
//
// Statistics as RowStats describes: every element shifted by k = x[r, 0],
// sums in double (a float sum of 1e18-sized squares overflows; double costs
// little next to the memory traffic on H100-class FP64), mean rounded to the
// float m that the backward will use, variance around m.
// At least 1024 resident threads per SM (<= 64 registers): with a 512-thread
// block, two blocks overlap one's reductions with the other's loads.
template <int VEC, int TPR, int VPT>
__global__ void __launch_bounds__(block_threads(TPR), 1024 / block_threads(TPR))
    forward_kernel(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                   int64_t rows, int dim, float eps, float* __restrict__ y, RowStats* __restrict__ saved) {
  constexpr bool kCached = VPT > 0;
  constexpr int kRowsPerBlock = block_threads(TPR) / TPR;
  __shared__ double scratch[2][32];

  const int t = threadIdx.x % TPR;
  const int64_t wanted = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / TPR;
  // Groups past the last row redo the last row (every lane must reach the
  // shuffles) and store nothing.
  const bool active = wanted < rows;
  const int64_t row = active ? wanted : rows - 1;
  const float* xr = x + row * dim;
  const int nvec = dim / VEC;
  const float k = __ldg(xr);

  // The row in registers (all loads issued before any use), or re-read
  // through L2 by each pass.
  Pack<VEC> cache[kCached ? VPT : 1];
  if constexpr (kCached) for_owned<TPR, VPT>(t, nvec, [&](int i, int v) { cache[i] = load<VEC, true>(xr + v * VEC); });
  const auto row_at = [&](int i, int v) {
    if constexpr (kCached) {
      (void)v;
      return cache[i];
    } else {
      (void)i;
      return load<VEC, false>(xr + v * VEC);
    }
  };
  double sum = 0.0;
  for_owned<TPR, VPT>(t, nvec, [&](int i, int v) {
    const Pack<VEC> p = row_at(i, v);
#pragma unroll
    for (int e = 0; e < VEC; ++e) sum += static_cast<double>(p.v[e] - k);
  });
  const float m = static_cast<float>(group_sum<TPR>(sum, scratch[0]) / dim);

  double squares = 0.0;
  for_owned<TPR, VPT>(t, nvec, [&](int i, int v) {
    const Pack<VEC> p = row_at(i, v);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const double d = static_cast<double>((p.v[e] - k) - m);
      squares += d * d;
    }
  });
  const double var = group_sum<TPR>(squares, scratch[1]) / dim;
  const float rstd = static_cast<float>(1.0 / sqrt(var + static_cast<double>(eps)));
  if (active && t == 0) saved[row] = RowStats{m, rstd};

  float* yr = y + row * dim;
  for_owned<TPR, VPT>(t, nvec, [&](int i, int v) {
    const Pack<VEC> p = row_at(i, v);
    const Pack<VEC> g = load<VEC, false>(gamma + v * VEC);
    const Pack<VEC> b = load<VEC, false>(beta + v * VEC);
    Pack<VEC> out;
#pragma unroll
    for (int e = 0; e < VEC; ++e) out.v[e] = g.v[e] * (((p.v[e] - k) - m) * rstd) + b.v[e];
    if (active) store<VEC>(yr + v * VEC, out);
  });
}

}  // namespace layernorm::cuda::detail

#endif  // LAYERNORM_CUDA_FORWARD_KERNEL_CUH
