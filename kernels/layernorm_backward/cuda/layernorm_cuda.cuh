// Fast CUDA layer normalisation, forward and backward (design: README.md of
// kernels/layernorm_backward and the comments of forward_kernel.cuh and
// backward_kernel.cuh).
//
// Host API, flashinfer style: the caller owns the workspace and the stream;
// the launchers allocate nothing and return the first CUDA error.
#ifndef LAYERNORM_CUDA_CUH
#define LAYERNORM_CUDA_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "layernorm_backward/row_stats.h"

namespace layernorm::cuda {

// What the plans depend on besides the shape.
struct DeviceLimits {
  int sm_count = 1;                  // cudaDevAttrMultiProcessorCount
  int max_shared_per_block = 49152;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
};

// How one call is executed.
struct Plan {
  int vec = 1;              // floats per load: 4 (float4) or 1
  int threads_per_row = 1;  // a power of two, 1..1024
  bool cached = true;       // the row stays in registers between passes
  int64_t blocks = 1;       // grid size
  int64_t rows_per_block = 1;
  size_t shared_bytes = 0;     // dynamic shared memory per block
  size_t workspace_bytes = 0;  // device workspace the launch needs (backward)
};

// dim must be below 2^31 (columns are int); rows * dim may exceed it.
bool supported(int64_t rows, int64_t dim, const char** why);

// `aligned`: every row pointer the call touches is 16-byte aligned, i.e.
// dim % 4 == 0 and each base pointer is 16-byte aligned.
Plan plan_forward(int64_t rows, int64_t dim, bool aligned);
// Queries the occupancy of the chosen kernel (host calls, no device work).
cudaError_t plan_backward(int64_t rows, int64_t dim, bool aligned, const DeviceLimits& limits, Plan* plan);

// x [rows, dim], gamma [dim], beta [dim] float32 device memory, read only
// y [rows, dim] float32 device memory, written
// saved [rows] RowStats device memory, written
// Asynchronous on `stream`.
cudaError_t forward(const Plan& plan, const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim,
                    float eps, float* y, RowStats* saved, cudaStream_t stream);

// dy, x [rows, dim], gamma [dim] read only; saved [rows] from forward()
// dx [rows, dim], dgamma [dim], dbeta [dim] written (dgamma and dbeta are
// deterministic for a given plan)
// workspace: plan.workspace_bytes of device memory, 16-byte aligned.
cudaError_t backward(const Plan& plan, const float* dy, const float* x, const float* gamma, const RowStats* saved,
                     int64_t rows, int64_t dim, float* dx, float* dgamma, float* dbeta, void* workspace,
                     cudaStream_t stream);

}  // namespace layernorm::cuda

#endif  // LAYERNORM_CUDA_CUH
