// Naive CUDA layer normalisation: the baseline the fast kernels are measured
// against. One kernel per step of the maths, every intermediate in global
// memory:
//   forward:  row means -> row rstd -> xhat and y (elementwise);
//   backward: dgamma, dbeta (a thread per column walks all rows) ->
//             g = dy * gamma (a [rows, dim] temporary) -> row sums of g and
//             g * xhat -> dx (elementwise).
// Like cpu-naive it keeps xhat: the saved state is [rows, dim] floats of
// xhat, then [rows] floats of rstd. Sums, the mean and x - mean are double
// (cpu-naive says why). The temporaries live in a cached workspace.
#include <cuda_runtime.h>

#include "abi_support.h"
#include "cuda_support.h"

namespace {

constexpr int kThreads = 256;

// Sum over the block (kThreads threads) by a shared-memory tree; every
// thread gets the total. Barriers before and after: callable repeatedly.
__device__ double block_sum(double v, double* shared) {
  __syncthreads();
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  return shared[0];
}

__global__ void row_mean_kernel(const float* x, int64_t dim, double* mean) {
  __shared__ double shared[kThreads];
  const float* xr = x + blockIdx.x * dim;
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < dim; j += kThreads) s += xr[j];
  s = block_sum(s, shared);
  if (threadIdx.x == 0) mean[blockIdx.x] = s / static_cast<double>(dim);
}

__global__ void row_rstd_kernel(const float* x, int64_t dim, float eps, const double* mean, float* rstd) {
  __shared__ double shared[kThreads];
  const float* xr = x + blockIdx.x * dim;
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < dim; j += kThreads) {
    const double d = xr[j] - mean[blockIdx.x];
    s += d * d;
  }
  s = block_sum(s, shared);
  if (threadIdx.x == 0) rstd[blockIdx.x] = static_cast<float>(1.0 / sqrt(s / static_cast<double>(dim) + eps));
}

__global__ void normalise_kernel(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim,
                                 const double* mean, const float* rstd, float* xhat, float* y) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < rows * dim;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / dim, j = i % dim;
    xhat[i] = static_cast<float>((x[i] - mean[r]) * rstd[r]);
    y[i] = gamma[j] * xhat[i] + beta[j];
  }
}

__global__ void column_grads_kernel(const float* dy, const float* xhat, int64_t rows, int64_t dim, float* dgamma,
                                    float* dbeta) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= dim) return;
  double g = 0.0, b = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    g += static_cast<double>(dy[r * dim + j]) * xhat[r * dim + j];
    b += dy[r * dim + j];
  }
  dgamma[j] = static_cast<float>(g);
  dbeta[j] = static_cast<float>(b);
}

__global__ void scale_kernel(const float* dy, const float* gamma, int64_t rows, int64_t dim, float* g) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < rows * dim;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    g[i] = dy[i] * gamma[i % dim];
}

// sums[r] = (mean of g, mean of g * xhat) of row r.
__global__ void row_sums_kernel(const float* g, const float* xhat, int64_t dim, double2* sums) {
  __shared__ double shared[kThreads];
  const int64_t base = blockIdx.x * dim;
  double sg = 0.0, sgx = 0.0;
  for (int64_t j = threadIdx.x; j < dim; j += kThreads) {
    sg += g[base + j];
    sgx += static_cast<double>(g[base + j]) * xhat[base + j];
  }
  sg = block_sum(sg, shared);
  sgx = block_sum(sgx, shared);
  if (threadIdx.x == 0) sums[blockIdx.x] = make_double2(sg / static_cast<double>(dim), sgx / static_cast<double>(dim));
}

__global__ void dx_kernel(const float* g, const float* xhat, const float* rstd, const double2* sums, int64_t rows,
                          int64_t dim, float* dx) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < rows * dim;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / dim;
    const float mean_g = static_cast<float>(sums[r].x), mean_gx = static_cast<float>(sums[r].y);
    dx[i] = rstd[r] * ((g[i] - mean_g) - xhat[i] * mean_gx);
  }
}

unsigned elementwise_blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

harness_status workspace(size_t bytes, void** out) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = layernorm_abi::device_workspace().get(device, bytes, out);
  return err == cudaSuccess ? HARNESS_STATUS_OK : layernorm_abi::cuda_fail("workspace allocation", err);
}

harness_status launched(const char* what) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? HARNESS_STATUS_OK : layernorm_abi::cuda_fail(what, err);
}

int64_t saved_bytes(int64_t rows, int64_t dim) { return static_cast<int64_t>(sizeof(float)) * (rows * dim + rows); }

harness_status forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps,
                       float* y, void* saved, void* stream_ptr) {
  if (rows > 0x7fffffff) return layernorm_abi::fail(HARNESS_STATUS_UNSUPPORTED, "more rows than one grid holds");
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  float* xhat = static_cast<float*>(saved);
  float* rstd = xhat + rows * dim;
  void* ws = nullptr;
  harness_status status = workspace(static_cast<size_t>(rows) * sizeof(double), &ws);
  if (status != HARNESS_STATUS_OK) return status;
  double* mean = static_cast<double*>(ws);
  const unsigned grid = static_cast<unsigned>(rows);
  row_mean_kernel<<<grid, kThreads, 0, stream>>>(x, dim, mean);
  if ((status = launched("row_mean_kernel")) != HARNESS_STATUS_OK) return status;
  row_rstd_kernel<<<grid, kThreads, 0, stream>>>(x, dim, eps, mean, rstd);
  if ((status = launched("row_rstd_kernel")) != HARNESS_STATUS_OK) return status;
  normalise_kernel<<<elementwise_blocks(rows * dim), kThreads, 0, stream>>>(x, gamma, beta, rows, dim, mean, rstd, xhat,
                                                                            y);
  return launched("normalise_kernel");
}

harness_status backward(const float* dy, const float* /*x*/, const float* gamma, const void* saved, int64_t rows,
                        int64_t dim, float /*eps*/, float* dx, float* dgamma, float* dbeta, void* stream_ptr) {
  if (rows > 0x7fffffff) return layernorm_abi::fail(HARNESS_STATUS_UNSUPPORTED, "more rows than one grid holds");
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const float* xhat = static_cast<const float*>(saved);
  const float* rstd = xhat + rows * dim;
  // [rows] double2 of row means, then [rows, dim] floats of g.
  const size_t sums_bytes = (static_cast<size_t>(rows) * sizeof(double2) + 255) / 256 * 256;
  void* ws = nullptr;
  harness_status status = workspace(sums_bytes + static_cast<size_t>(rows * dim) * sizeof(float), &ws);
  if (status != HARNESS_STATUS_OK) return status;
  double2* sums = static_cast<double2*>(ws);
  float* g = reinterpret_cast<float*>(static_cast<char*>(ws) + sums_bytes);
  column_grads_kernel<<<static_cast<unsigned>((dim + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      dy, xhat, rows, dim, dgamma, dbeta);
  if ((status = launched("column_grads_kernel")) != HARNESS_STATUS_OK) return status;
  scale_kernel<<<elementwise_blocks(rows * dim), kThreads, 0, stream>>>(dy, gamma, rows, dim, g);
  if ((status = launched("scale_kernel")) != HARNESS_STATUS_OK) return status;
  row_sums_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(g, xhat, dim, sums);
  if ((status = launched("row_sums_kernel")) != HARNESS_STATUS_OK) return status;
  dx_kernel<<<elementwise_blocks(rows * dim), kThreads, 0, stream>>>(g, xhat, rstd, sums, rows, dim, dx);
  return launched("dx_kernel");
}

}  // namespace

LAYERNORM_EXPORT_ABI(saved_bytes, forward, backward)
