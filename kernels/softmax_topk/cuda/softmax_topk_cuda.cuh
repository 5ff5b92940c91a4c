// Fast CUDA softmax + top-k (design: README.md beside this folder and the
// comments of topk_group.cuh and softmax_topk_kernels.cuh).
//
// Host API, flashinfer style: the caller owns the workspace and the stream;
// the launcher allocates nothing and returns the first CUDA error.
#ifndef SOFTMAX_TOPK_CUDA_CUH
#define SOFTMAX_TOPK_CUDA_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace softmax_topk::cuda {

// Largest k handled (the block path keeps k + one 2048-element tile in 4096
// shared-memory slots).
constexpr int64_t kMaxK = 1024;

// How one call is executed; depends on the shape and the GPU's SM count only.
struct Plan {
  enum class Path { kWarpRows, kBlockRows };
  Path path = Path::kBlockRows;
  int segments = 1;            // > 1: rows split over blocks, then merged
  int64_t segment_length = 0;  // columns per segment (a multiple of 4)
  size_t workspace_bytes = 0;  // device workspace the launch needs
};

// False for shapes this implementation does not handle (k > kMaxK, or grids
// beyond CUDA's limits); then `why` names the reason.
bool supported(int64_t rows, int64_t vocab, int64_t k, const char** why);

// sm_count: multiprocessors of the device (cudaDevAttrMultiProcessorCount).
Plan make_plan(int64_t rows, int64_t vocab, int64_t k, int sm_count);

// For every row: the k largest softmax probabilities and their columns, best
// first, ties by the lower column.
//
// logits    [rows, vocab] float32 device memory, row-major, 4-byte aligned
// probs     [rows, k]     float32 device memory, written
// indices   [rows, k]     int32   device memory, written
// workspace plan.workspace_bytes of device memory, 256-byte aligned (may be
//           null when that is 0)
// Asynchronous on `stream`; returns cudaGetLastError() of the first failing
// launch, cudaSuccess otherwise.
cudaError_t softmax_topk(const Plan& plan, const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs,
                         int32_t* indices, void* workspace, cudaStream_t stream);

}  // namespace softmax_topk::cuda

#endif  // SOFTMAX_TOPK_CUDA_CUH
