// Naive CUDA softmax + top-k: the baseline the fused kernel is measured
// against. Four separate kernels, each a full pass over the row:
//   1. row max            -> row_max [rows]
//   2. sum of exp(x - max) -> row_sum [rows]
//   3. normalise: the whole softmax written to a [rows, vocab] workspace
//   4. selection: one block per row, k rounds of a block-wide argmax, each
//      round over the whole row, excluding what earlier rounds took.
// Round j takes the best element strictly after round j-1's winner in the
// order (logit desc, column asc): no exclusion mask to clear, and ties
// resolve by column. Ranking by logit orders the probabilities exactly
// (ranking the rounded probabilities would not where exp underflows to 0);
// the probabilities themselves are read from the materialised softmax.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "abi_support.h"
#include "cuda_support.h"
#include "softmax_topk.h"

namespace {

constexpr int kThreads = 256;
using Key = unsigned long long;

// (logit, column) as one integer, larger = better: ordered float bits, then
// the complement of the column.
__device__ Key make_key(float value, int64_t column) {
  const uint32_t bits = __float_as_uint(value);
  const uint32_t ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<Key>(ordered) << 32) | static_cast<Key>(~static_cast<uint32_t>(column));
}

// Block-wide reductions; every thread gets the result. scratch: [kThreads / 32].
template <class T, class Op>
__device__ T block_reduce(T v, T* scratch, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) v = op(v, scratch[w]);
  __syncthreads();
  return v;
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct KeyMaxOp {
  __device__ Key operator()(Key a, Key b) const { return a > b ? a : b; }
};

__global__ void row_max_kernel(const float* __restrict__ logits, int64_t vocab, float* __restrict__ row_max) {
  __shared__ float scratch[kThreads / 32];
  const float* x = logits + blockIdx.x * vocab;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) m = fmaxf(m, x[i]);
  m = block_reduce(m, scratch, MaxOp());
  if (threadIdx.x == 0) row_max[blockIdx.x] = m;
}

__global__ void row_sum_kernel(const float* __restrict__ logits, int64_t vocab, const float* __restrict__ row_max,
                               float* __restrict__ row_sum) {
  __shared__ float scratch[kThreads / 32];
  const float* x = logits + blockIdx.x * vocab;
  const float m = row_max[blockIdx.x];  // finite: a row is never all -inf
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) s += expf(x[i] - m);
  s = block_reduce(s, scratch, SumOp());
  if (threadIdx.x == 0) row_sum[blockIdx.x] = s;
}

// softmax [rows, vocab]
__global__ void normalise_kernel(const float* __restrict__ logits, int64_t rows, int64_t vocab,
                                 const float* __restrict__ row_max, const float* __restrict__ row_sum,
                                 float* __restrict__ softmax) {
  const int64_t n = rows * vocab;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / vocab;
    softmax[i] = expf(logits[i] - row_max[row]) / row_sum[row];
  }
}

__global__ void select_kernel(const float* __restrict__ logits, const float* __restrict__ softmax, int64_t vocab, int k,
                              float* __restrict__ probs, int32_t* __restrict__ indices) {
  __shared__ Key scratch[kThreads / 32];
  const float* x = logits + blockIdx.x * vocab;
  Key previous = ~Key{0};  // every real key is below it
  for (int j = 0; j < k; ++j) {
    Key best = 0;
    for (int64_t i = threadIdx.x; i < vocab; i += kThreads) {
      const Key key = make_key(x[i], i);
      if (key < previous && key > best) best = key;
    }
    best = block_reduce(best, scratch, KeyMaxOp());
    if (threadIdx.x == 0) {
      const int64_t column = static_cast<int64_t>(~static_cast<uint32_t>(best & 0xffffffffull));
      const int64_t out = static_cast<int64_t>(blockIdx.x) * k + j;
      probs[out] = softmax[blockIdx.x * vocab + column];
      indices[out] = static_cast<int32_t>(column);
    }
    previous = best;
  }
}

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

harness_status run(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices,
                   void* stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  using softmax_topk_abi::cuda_fail;
  if (rows > 0x7fffffff) return softmax_topk_abi::fail(HARNESS_STATUS_UNSUPPORTED, "rows above 2^31 - 1");

  // Workspace: row_max [rows], row_sum [rows], softmax [rows, vocab].
  const size_t stats_bytes = align256(static_cast<size_t>(rows) * sizeof(float));
  const size_t softmax_bytes = static_cast<size_t>(rows) * static_cast<size_t>(vocab) * sizeof(float);
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return cuda_fail("cudaGetDevice", err);
  void* workspace = nullptr;
  err = softmax_topk_abi::device_workspace().get(device, 2 * stats_bytes + softmax_bytes, &workspace);
  if (err != cudaSuccess) return cuda_fail("workspace allocation", err);
  float* row_max = static_cast<float*>(workspace);
  float* row_sum = reinterpret_cast<float*>(static_cast<char*>(workspace) + stats_bytes);
  float* softmax = reinterpret_cast<float*>(static_cast<char*>(workspace) + 2 * stats_bytes);

  const unsigned grid_rows = static_cast<unsigned>(rows);
  row_max_kernel<<<grid_rows, kThreads, 0, stream>>>(logits, vocab, row_max);
  if ((err = cudaGetLastError()) != cudaSuccess) return cuda_fail("row_max_kernel", err);
  row_sum_kernel<<<grid_rows, kThreads, 0, stream>>>(logits, vocab, row_max, row_sum);
  if ((err = cudaGetLastError()) != cudaSuccess) return cuda_fail("row_sum_kernel", err);
  const int64_t elements = rows * vocab;
  const int64_t wanted = (elements + kThreads - 1) / kThreads;
  const unsigned grid_elements = static_cast<unsigned>(wanted < 65536 ? wanted : 65536);
  normalise_kernel<<<grid_elements, kThreads, 0, stream>>>(logits, rows, vocab, row_max, row_sum, softmax);
  if ((err = cudaGetLastError()) != cudaSuccess) return cuda_fail("normalise_kernel", err);
  select_kernel<<<grid_rows, kThreads, 0, stream>>>(logits, softmax, vocab, static_cast<int>(k), probs, indices);
  if ((err = cudaGetLastError()) != cudaSuccess) return cuda_fail("select_kernel", err);
  return HARNESS_STATUS_OK;
}

}  // namespace

SOFTMAX_TOPK_EXPORT_ABI(run)
