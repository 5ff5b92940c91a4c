// ABI shim of the project's fast CUDA kernels (kernels/layernorm_backward/cuda).
#include "abi_support.h"
#include "cuda_support.h"
#include "layernorm_backward/cuda/layernorm_cuda.cuh"

namespace {

namespace lc = layernorm::cuda;
using layernorm::RowStats;
using layernorm_abi::cuda_fail;

int64_t saved_bytes(int64_t rows, int64_t /*dim*/) { return layernorm::saved_state_bytes(rows); }

harness_status forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps,
                       float* y, void* saved, void* stream) {
  const char* why = "";
  if (!lc::supported(rows, dim, &why)) return layernorm_abi::fail(HARNESS_STATUS_UNSUPPORTED, why);
  const bool aligned = dim % 4 == 0 && layernorm_abi::aligned16({x, gamma, beta, y});
  const lc::Plan plan = lc::plan_forward(rows, dim, aligned);
  const cudaError_t err = lc::forward(plan, x, gamma, beta, rows, dim, eps, y, static_cast<RowStats*>(saved),
                                      static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) return cuda_fail("layernorm forward launch", err);
  return HARNESS_STATUS_OK;
}

harness_status backward(const float* dy, const float* x, const float* gamma, const void* saved, int64_t rows,
                        int64_t dim, float /*eps: rstd is saved*/, float* dx, float* dgamma, float* dbeta,
                        void* stream) {
  const char* why = "";
  if (!lc::supported(rows, dim, &why)) return layernorm_abi::fail(HARNESS_STATUS_UNSUPPORTED, why);
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return cuda_fail("cudaGetDevice", err);
  lc::DeviceLimits limits;
  err = layernorm_abi::device_attribute(device, cudaDevAttrMultiProcessorCount, &limits.sm_count);
  if (err == cudaSuccess)
    err =
        layernorm_abi::device_attribute(device, cudaDevAttrMaxSharedMemoryPerBlockOptin, &limits.max_shared_per_block);
  if (err != cudaSuccess) return cuda_fail("cudaDeviceGetAttribute", err);
  const bool aligned = dim % 4 == 0 && layernorm_abi::aligned16({dy, x, gamma, dx});
  lc::Plan plan;
  err = lc::plan_backward(rows, dim, aligned, limits, &plan);
  if (err != cudaSuccess) return cuda_fail("layernorm backward plan", err);
  void* workspace = nullptr;
  err = layernorm_abi::device_workspace().get(device, plan.workspace_bytes, &workspace);
  if (err != cudaSuccess) return cuda_fail("workspace allocation", err);
  err = lc::backward(plan, dy, x, gamma, static_cast<const RowStats*>(saved), rows, dim, dx, dgamma, dbeta, workspace,
                     static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) return cuda_fail("layernorm backward launch", err);
  return HARNESS_STATUS_OK;
}

}  // namespace

LAYERNORM_EXPORT_ABI(saved_bytes, forward, backward)
