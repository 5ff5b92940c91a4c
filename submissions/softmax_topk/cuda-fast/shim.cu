// ABI shim of the project's fast CUDA kernel (kernels/softmax_topk/cuda).
#include "abi_support.h"
#include "cuda_support.h"
#include "softmax_topk.h"
#include "softmax_topk/cuda/softmax_topk_cuda.cuh"

namespace {

harness_status run(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices,
                   void* stream) {
  using softmax_topk_abi::cuda_fail;
  const char* why = "";
  if (!softmax_topk::cuda::supported(rows, vocab, k, &why))
    return softmax_topk_abi::fail(HARNESS_STATUS_UNSUPPORTED, why);

  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return cuda_fail("cudaGetDevice", err);
  int sm_count = 0;
  err = softmax_topk_abi::multiprocessor_count(device, &sm_count);
  if (err != cudaSuccess) return cuda_fail("cudaDeviceGetAttribute", err);
  const softmax_topk::cuda::Plan plan = softmax_topk::cuda::make_plan(rows, vocab, k, sm_count);
  void* workspace = nullptr;
  err = softmax_topk_abi::device_workspace().get(device, plan.workspace_bytes, &workspace);
  if (err != cudaSuccess) return cuda_fail("workspace allocation", err);
  err = softmax_topk::cuda::softmax_topk(plan, logits, rows, vocab, k, probs, indices, workspace,
                                         static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) return cuda_fail("softmax_topk kernel launch", err);
  return HARNESS_STATUS_OK;
}

}  // namespace

SOFTMAX_TOPK_EXPORT_ABI(run)
