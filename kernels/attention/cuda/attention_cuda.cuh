// Fast CUDA attention, forward and backward: FlashAttention-2 style tiles in
// shared memory, an online softmax in float32, plain FMA (no tensor cores).
// Plain functions on raw device pointers, not tied to the harness ABI
// (submissions/attention/cuda-fast wraps them). Layouts and semantics are
// those of challenges/attention/attention.h.
//
// The launchers allocate nothing and return the first CUDA error; every
// kernel runs on the caller's stream.
#ifndef ATTENTION_CUDA_CUH
#define ATTENTION_CUDA_CUH

#include <cuda_runtime.h>

#include <cstdint>

namespace attention::cuda {

struct Shape {
  int64_t batch = 1;
  int64_t heads_q = 1;
  int64_t heads_kv = 1;  // divides heads_q
  int64_t n_q = 1;
  int64_t n_kv = 1;
  int64_t dim = 1;
  float scale = 1.0f;
  bool causal = false;  // key j seen by query i when j <= i + n_kv - n_q
};

// What the kernels need of the device besides the shape.
struct DeviceLimits {
  int max_shared_per_block = 49152;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
};

// dim <= 256 (each kernel is compiled for dim padded to 32, 64, 96, 128, 192
// or 256), n_q and n_kv below 2^31 - 256, the grids below 2^31 blocks, and
// the shared memory of the dim's kernels within the device's limit. *why
// says what fails.
bool supported(const Shape& shape, const DeviceLimits& limits, const char** why);

// q [batch, heads_q, n_q, dim], k and v [batch, heads_kv, n_kv, dim] read;
// o [batch, heads_q, n_q, dim] and lse [batch, heads_q, n_q] written, every
// element. A query that sees no key gets o = 0 and lse = -inf.
// One block per (batch, query head, tile of 64 queries); key tiles the
// causal mask hides from the whole tile are skipped.
cudaError_t forward(const Shape& shape, const float* q, const float* k, const float* v, float* o, float* lse,
                    cudaStream_t stream);

// dq, dk, dv for dL/do = dout, given the forward's o and lse (lse used as
// given: p = exp(s - lse)). No scratch: rowsum(dout * o) is recomputed by the
// kernels that need it. Two kernels, race-free and deterministic: dq with a
// block per (batch, query head, query tile); dk and dv with a block per
// (batch, kv head, key tile) that sums the group's query heads in order.
cudaError_t backward(const Shape& shape, const float* q, const float* k, const float* v, const float* o,
                     const float* lse, const float* dout, float* dq, float* dk, float* dv, cudaStream_t stream);

}  // namespace attention::cuda

#endif  // ATTENTION_CUDA_CUH
