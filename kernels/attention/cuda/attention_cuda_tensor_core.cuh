// The CUDA attention on tensor cores (3xTF32 mma, compute capability 8.0
// and later, dim <= 128): the same contracts as attention::cuda::forward and
// backward (attention_cuda.cuh), whose checks they keep.
#ifndef ATTENTION_CUDA_TENSOR_CORE_CUH
#define ATTENTION_CUDA_TENSOR_CORE_CUH

#include "attention_cuda.cuh"

namespace attention::cuda {

// What the tensor-core kernels need beyond supported(): dim <= 128, a
// device of compute capability 8.0 or later (`compute_major`), and their
// shared memory within the device's limit. *why says what fails.
bool tensor_core_supported(const Shape& shape, const DeviceLimits& limits, int compute_major, const char** why);

// One block of four warps per (batch, query head, tile of 64 queries).
cudaError_t forward_tensor_core(const Shape& shape, const float* q, const float* k, const float* v, float* o,
                                float* lse, cudaStream_t stream);

// forward_tensor_core with K and V split for 3xTF32 once a block, as they
// are loaded, rather than by every warp as it reads them: 32 keys a step.
cudaError_t forward_tensor_core_split_kv(const Shape& shape, const float* q, const float* k, const float* v, float* o,
                                         float* lse, cudaStream_t stream);

// Two kernels as backward()'s: dq with a block of four warps per (batch,
// query head, tile of 64 queries); dk and dv with one per (batch, kv head,
// tile of 64 keys), 32 queries a step.
cudaError_t backward_tensor_core(const Shape& shape, const float* q, const float* k, const float* v, const float* o,
                                 const float* lse, const float* dout, float* dq, float* dk, float* dv,
                                 cudaStream_t stream);

// The backward in one pass: dq zeroed, then the dk/dv kernel's blocks add
// their ds k terms to it atomically as they go (fewer flops; dq's order of
// sums, and so its last bits, may differ between runs).
cudaError_t backward_tensor_core_one_pass(const Shape& shape, const float* q, const float* k, const float* v,
                                          const float* o, const float* lse, const float* dout, float* dq, float* dk,
                                          float* dv, cudaStream_t stream);

}  // namespace attention::cuda

#endif  // ATTENTION_CUDA_TENSOR_CORE_CUH
