// ABI shim of the project's fast CUDA kernels (kernels/attention/cuda).
// Built with ATTENTION_TENSOR_CORE (tests/fixtures/attention/
// cuda-tensor-core), forward and backward run on tensor cores where they can;
// with ATTENTION_ONE_PASS_BACKWARD too (cuda-tensor-core-one-pass), the
// backward there is the one-pass kernel; with ATTENTION_SPLIT_KV_FORWARD
// (cuda-tensor-core-split-kv), the forward splits K and V once a block.
#include "abi_support.h"
#include "attention/cuda/attention_cuda.cuh"
#include "cuda_support.h"
#ifdef ATTENTION_TENSOR_CORE
#include "attention/cuda/attention_cuda_tensor_core.cuh"
#endif

namespace {

namespace ac = attention::cuda;
using attention_abi::cuda_fail;

ac::Shape shape_of(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv, int64_t dim,
                   float scale, int32_t causal) {
  return ac::Shape{batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal != 0};
}

// OK when the kernels take the shape on the current device, else why not.
harness_status check_supported(const ac::Shape& shape) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return cuda_fail("cudaGetDevice", err);
  ac::DeviceLimits limits;
  err = attention_abi::device_attribute(device, cudaDevAttrMaxSharedMemoryPerBlockOptin, &limits.max_shared_per_block);
  if (err != cudaSuccess) return cuda_fail("cudaDeviceGetAttribute", err);
  const char* why = "";
  if (!ac::supported(shape, limits, &why)) return attention_abi::fail(HARNESS_STATUS_UNSUPPORTED, why);
  return HARNESS_STATUS_OK;
}

#ifdef ATTENTION_TENSOR_CORE
// Whether the tensor-core kernels take the shape on the current device;
// where they do not, the plain kernels run.
bool use_tensor_cores(const ac::Shape& shape) {
  int device = 0, major = 0;
  ac::DeviceLimits limits;
  if (cudaGetDevice(&device) != cudaSuccess ||
      attention_abi::device_attribute(device, cudaDevAttrComputeCapabilityMajor, &major) != cudaSuccess ||
      attention_abi::device_attribute(device, cudaDevAttrMaxSharedMemoryPerBlockOptin, &limits.max_shared_per_block) !=
          cudaSuccess) {
    return false;
  }
  const char* why = "";
  return ac::tensor_core_supported(shape, limits, major, &why);
}
#endif

harness_status forward(const float* q, const float* k, const float* v, int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t n_q, int64_t n_kv, int64_t dim, float scale, int32_t causal, float* o, float* lse,
                       void* stream) {
  const ac::Shape shape = shape_of(batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal);
  const harness_status status = check_supported(shape);
  if (status != HARNESS_STATUS_OK) return status;
#ifdef ATTENTION_TENSOR_CORE
  if (use_tensor_cores(shape)) {
#ifdef ATTENTION_SPLIT_KV_FORWARD
    const auto forward_on_tensor_cores = ac::forward_tensor_core_split_kv;
#else
    const auto forward_on_tensor_cores = ac::forward_tensor_core;
#endif
    const cudaError_t err = forward_on_tensor_cores(shape, q, k, v, o, lse, static_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) return cuda_fail("attention forward (tensor cores) launch", err);
    return HARNESS_STATUS_OK;
  }
#endif
  const cudaError_t err = ac::forward(shape, q, k, v, o, lse, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) return cuda_fail("attention forward launch", err);
  return HARNESS_STATUS_OK;
}

harness_status backward(const float* q, const float* k, const float* v, const float* o, const float* lse,
                        const float* dout, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv,
                        int64_t dim, float scale, int32_t causal, float* dq, float* dk, float* dv, void* stream) {
  const ac::Shape shape = shape_of(batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal);
  const harness_status status = check_supported(shape);
  if (status != HARNESS_STATUS_OK) return status;
#ifdef ATTENTION_TENSOR_CORE
  if (use_tensor_cores(shape)) {
#ifdef ATTENTION_ONE_PASS_BACKWARD
    const auto backward_on_tensor_cores = ac::backward_tensor_core_one_pass;
#else
    const auto backward_on_tensor_cores = ac::backward_tensor_core;
#endif
    const cudaError_t err =
        backward_on_tensor_cores(shape, q, k, v, o, lse, dout, dq, dk, dv, static_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) return cuda_fail("attention backward (tensor cores) launch", err);
    return HARNESS_STATUS_OK;
  }
#endif
  const cudaError_t err = ac::backward(shape, q, k, v, o, lse, dout, dq, dk, dv, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) return cuda_fail("attention backward launch", err);
  return HARNESS_STATUS_OK;
}

}  // namespace

ATTENTION_EXPORT_ABI(forward, backward)
