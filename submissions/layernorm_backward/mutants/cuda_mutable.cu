// A plausible mid-level CUDA layer normalisation, the common source of the
// CUDA mutants. Each mutant's submission.json defines one MUTANT_* macro that
// switches on one realistic bug; with none defined the implementation is
// correct (it is never shipped that way: cuda-fast and cuda-naive are). An
// exploit's defines one EXPLOIT_* macro instead, for one attack on the harness.
//
// Design: the forward runs a block per row (statistics on the row shifted by
// its first element, in double) and saves (mean - x[r, 0], rstd). The
// backward gives each block a tile of kTileRows rows; per row a block sum of
// g and g * xhat, then dx; each thread owns columns tid, tid + kThreads, ...
// and adds their dgamma/dbeta contributions to the block's partial row in a
// workspace, which a second kernel adds up.
#include <cuda_runtime.h>

#include <cstdlib>

#include "abi_support.h"
#include "cuda_support.h"

namespace {

constexpr int kThreads = 256;
constexpr int64_t kTileRows = 16;

struct Saved {
  float shifted_mean, rstd;
};

// Block-wide sum (kThreads threads) through shared memory; every thread gets
// the total. Barriers on both sides: callable back to back.
template <class T>
__device__ T block_sum(T v, T* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  __syncthreads();
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  T total = 0;
  for (int w = 0; w < kThreads / 32; ++w) total += shared[w];
  return total;
}

__global__ void forward_kernel(const float* x, const float* gamma, const float* beta, int64_t dim, float eps, float* y,
                               Saved* saved) {
  const int64_t row = blockIdx.x;
  const float* xr = x + row * dim;
  const float k = xr[0];
#ifdef MUTANT_NAIVE_VARIANCE
  // Bug: one pass, var = E[x^2] - E[x]^2 with float sums of the raw values.
  // Right for data centred near 0; with a mean of M and std 1, E[x^2] ~ M^2
  // and float keeps ~7 digits of it: wrong from an offset of ~1e1, and the
  // variance collapses (clamped to 0) by ~1e3.
  __shared__ float shared_f[kThreads / 32];
  float s = 0.0f, sq = 0.0f;
  for (int64_t j = threadIdx.x; j < dim; j += kThreads) {
    s += xr[j];
    sq += xr[j] * xr[j];
  }
  s = block_sum(s, shared_f);
  sq = block_sum(sq, shared_f);
  const float mean = s / dim;
  const float m = mean - k;
  const float var_f = sq / dim - mean * mean;
  const double var = var_f > 0.0f ? var_f : 0.0f;
#else
  __shared__ double shared_d[kThreads / 32];
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < dim; j += kThreads) s += static_cast<double>(xr[j] - k);
  const float m = static_cast<float>(block_sum(s, shared_d) / dim);
  double sq = 0.0;
  for (int64_t j = threadIdx.x; j < dim; j += kThreads) {
    const double d = static_cast<double>((xr[j] - k) - m);
    sq += d * d;
  }
  const double var = block_sum(sq, shared_d) / dim;
#endif
  const float rstd = static_cast<float>(1.0 / sqrt(var + eps));
  if (threadIdx.x == 0) saved[row] = Saved{m, rstd};
  for (int64_t j = threadIdx.x; j < dim; j += kThreads)
    y[row * dim + j] = gamma[j] * (((xr[j] - k) - m) * rstd) + beta[j];
}

// acc: [2, dim], this block's partial row (or, in the racy variant, dgamma
// and dbeta themselves).
__global__ void backward_kernel(const float* dy, const float* x, const float* gamma, const Saved* saved, int64_t rows,
                                int64_t dim, float* dx, float* partials, float* dgamma, float* dbeta) {
  __shared__ float shared[kThreads / 32];
#ifdef MUTANT_DGAMMA_RACE
  // Bug: every block adds into dgamma/dbeta directly with a plain +=, as if
  // blocks ran one after another: concurrent blocks read the same old value
  // and overwrite each other's sums (lost updates).
  (void)partials;
  float* acc_dgamma = dgamma;
  float* acc_dbeta = dbeta;
#else
  (void)dgamma;
  (void)dbeta;
  float* acc_dgamma = partials + blockIdx.x * 2 * dim;
  float* acc_dbeta = acc_dgamma + dim;
  for (int64_t j = threadIdx.x; j < dim; j += kThreads) acc_dgamma[j] = acc_dbeta[j] = 0.0f;
#endif
  const int64_t begin = blockIdx.x * kTileRows;
  const int64_t end = begin + kTileRows < rows ? begin + kTileRows : rows;
  for (int64_t row = begin; row < end; ++row) {
    const float* xr = x + row * dim;
    const float* dyr = dy + row * dim;
    const Saved s = saved[row];
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t j = threadIdx.x; j < dim; j += kThreads) {
      const float xhat = ((xr[j] - xr[0]) - s.shifted_mean) * s.rstd;
      const float g = dyr[j] * gamma[j];
      sg += g;
      sgx += g * xhat;
      acc_dgamma[j] += dyr[j] * xhat;
      acc_dbeta[j] += dyr[j];
    }
    const float mean_g = block_sum(sg, shared) / dim;
    const float mean_gx = block_sum(sgx, shared) / dim;
    for (int64_t j = threadIdx.x; j < dim; j += kThreads) {
      const float xhat = ((xr[j] - xr[0]) - s.shifted_mean) * s.rstd;
      const float g = dyr[j] * gamma[j];
      dx[row * dim + j] = dim == 1 ? 0.0f : s.rstd * ((g - mean_g) - xhat * mean_gx);
    }
  }
}

#ifndef MUTANT_DGAMMA_RACE
__global__ void reduce_kernel(const float* partials, int64_t blocks, int64_t dim, float* dgamma, float* dbeta) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= dim) return;
  float g = 0.0f, b = 0.0f;
  for (int64_t p = 0; p < blocks; ++p) {
    g += partials[2 * p * dim + j];
    b += partials[(2 * p + 1) * dim + j];
  }
  dgamma[j] = g;
  dbeta[j] = b;
}
#endif

int64_t saved_bytes(int64_t rows, int64_t /*dim*/) { return rows * static_cast<int64_t>(sizeof(Saved)); }

#ifdef EXPLOIT_HIDDEN_INPUT_STORE
// The exploit cuda-hidden-input-store: a device store of its own, outside
// the declared saved state, holding a copy of every forward's input.
void* hidden_store = nullptr;
size_t hidden_store_bytes = 0;

cudaError_t keep_hidden_copy(const float* x, int64_t rows, int64_t dim, cudaStream_t stream) {
  const size_t bytes = static_cast<size_t>(rows * dim) * sizeof(float);
  if (bytes > hidden_store_bytes) {
    if (hidden_store != nullptr) cudaFree(hidden_store);
    hidden_store = nullptr;
    hidden_store_bytes = 0;
    const cudaError_t err = cudaMalloc(&hidden_store, bytes);
    if (err != cudaSuccess) return err;
    hidden_store_bytes = bytes;
  }
  return cudaMemcpyAsync(hidden_store, x, bytes, cudaMemcpyDeviceToDevice, stream);
}
#endif

#if defined(EXPLOIT_HIDDEN_HOST_STORE) || defined(EXPLOIT_HIDDEN_PINNED_STORE)
// The exploits cuda-hidden-host-store and cuda-hidden-pinned-store: a host
// store of their own, outside the declared saved state, holding a copy of
// every forward's input: pageable heap memory, or pinned memory from the
// CUDA runtime (a shared anonymous mapping).
void* host_store = nullptr;
size_t host_store_bytes = 0;

cudaError_t keep_host_copy(const float* x, int64_t rows, int64_t dim, cudaStream_t stream) {
  const size_t bytes = static_cast<size_t>(rows * dim) * sizeof(float);
  if (bytes > host_store_bytes) {
#ifdef EXPLOIT_HIDDEN_PINNED_STORE
    if (host_store != nullptr) cudaFreeHost(host_store);
    host_store = nullptr;
    host_store_bytes = 0;
    const cudaError_t err = cudaMallocHost(&host_store, bytes);
    if (err != cudaSuccess) return err;
#else
    std::free(host_store);
    host_store = std::malloc(bytes);
    host_store_bytes = 0;
    if (host_store == nullptr) return cudaErrorMemoryAllocation;
#endif
    host_store_bytes = bytes;
  }
  // Waited for, so that every page of the store is written when the call returns.
  const cudaError_t err = cudaMemcpyAsync(host_store, x, bytes, cudaMemcpyDeviceToHost, stream);
  return err == cudaSuccess ? cudaStreamSynchronize(stream) : err;
}
#endif

harness_status forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps,
                       float* y, void* saved, void* stream) {
  forward_kernel<<<static_cast<unsigned>(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      x, gamma, beta, dim, eps, y, static_cast<Saved*>(saved));
  cudaError_t err = cudaGetLastError();
#ifdef EXPLOIT_HIDDEN_INPUT_STORE
  if (err == cudaSuccess) err = keep_hidden_copy(x, rows, dim, static_cast<cudaStream_t>(stream));
#endif
#if defined(EXPLOIT_HIDDEN_HOST_STORE) || defined(EXPLOIT_HIDDEN_PINNED_STORE)
  if (err == cudaSuccess) err = keep_host_copy(x, rows, dim, static_cast<cudaStream_t>(stream));
#endif
  return err == cudaSuccess ? HARNESS_STATUS_OK : layernorm_abi::cuda_fail("forward_kernel", err);
}

harness_status backward(const float* dy, const float* x, const float* gamma, const void* saved, int64_t rows,
                        int64_t dim, float /*eps*/, float* dx, float* dgamma, float* dbeta, void* stream_ptr) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t blocks = (rows + kTileRows - 1) / kTileRows;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  void* partials = nullptr;
  if (err == cudaSuccess)
    err =
        layernorm_abi::device_workspace().get(device, static_cast<size_t>(blocks * 2 * dim) * sizeof(float), &partials);
  if (err != cudaSuccess) return layernorm_abi::cuda_fail("workspace allocation", err);
#ifdef MUTANT_DGAMMA_RACE
  err = cudaMemsetAsync(dgamma, 0, static_cast<size_t>(dim) * sizeof(float), stream);
  if (err == cudaSuccess) err = cudaMemsetAsync(dbeta, 0, static_cast<size_t>(dim) * sizeof(float), stream);
  if (err != cudaSuccess) return layernorm_abi::cuda_fail("cudaMemsetAsync", err);
#endif
  backward_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      dy, x, gamma, static_cast<const Saved*>(saved), rows, dim, dx, static_cast<float*>(partials), dgamma, dbeta);
  err = cudaGetLastError();
  if (err != cudaSuccess) return layernorm_abi::cuda_fail("backward_kernel", err);
#ifndef MUTANT_DGAMMA_RACE
  reduce_kernel<<<static_cast<unsigned>((dim + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      static_cast<const float*>(partials), blocks, dim, dgamma, dbeta);
  err = cudaGetLastError();
  if (err != cudaSuccess) return layernorm_abi::cuda_fail("reduce_kernel", err);
#endif
  return HARNESS_STATUS_OK;
}

}  // namespace

LAYERNORM_EXPORT_ABI(saved_bytes, forward, backward)
