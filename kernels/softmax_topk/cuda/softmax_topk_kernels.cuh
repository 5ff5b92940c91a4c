// The kernels of the CUDA softmax_topk (launched by softmax_topk_cuda.cu).
//
//   warp_rows:  small rows (vocab <= kWarpMaxVocab, k <= kWarpMaxK): one warp
//               per row, kWarpsPerBlock rows per block, a 512-key buffer per
//               warp. Many rows in flight, no block barriers.
//   block_rows: one 512-thread block per row, or per segment of a row when
//               there are too few rows to fill the GPU (then it writes a
//               partial state and its top k to a workspace).
//   merge:      one block per row combines the segments' states and top k.
#ifndef SOFTMAX_TOPK_CUDA_KERNELS_CUH
#define SOFTMAX_TOPK_CUDA_KERNELS_CUH

#include "topk_group.cuh"

namespace softmax_topk::cuda::detail {

constexpr int kWarpsPerBlock = 4;
constexpr int kWarpCapacity = 512;  // keys per warp: k <= 512 - 128
constexpr int kBlockThreads = 512;
constexpr int kBlockCapacity = 4096;  // 32 KiB of keys: k <= 4096 - 2048

// [rows, vocab] -> [rows, k]; row = blockIdx.x * kWarpsPerBlock + warp.
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    softmax_topk_warp_rows(const float* __restrict__ logits, int64_t rows, int64_t vocab, int k,
                           float* __restrict__ probs, int32_t* __restrict__ indices) {
  __shared__ CandidateBuffer<kWarpCapacity> buffers[kWarpsPerBlock];
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp;
  if (row >= rows) return;  // a whole warp; this kernel has no block barrier
  CandidateBuffer<kWarpCapacity>& buf = buffers[warp];
  if (lane == 0) reset(buf);
  __syncwarp();

  SoftmaxState st = empty_state();
  scan_columns<32>(logits + row * vocab, 0, vocab, k, buf, st, lane);
  const int valid = finish<32>(buf, k, lane);
  const SoftmaxState total = group_reduce<32>(st, nullptr, lane);
  write_answer<32>(buf, valid, k, total, probs + row * k, indices + row * k, lane);
}

// One block per (row, segment): blockIdx.x = row * segments + segment, and the
// segment covers columns [segment * segment_length, ...) of the row. With one
// segment the answer goes straight to probs/indices; otherwise
//   partial_keys   [rows, segments, k]  the segment's top k, best first
//   partial_states [rows, segments]     the segment's softmax state
__global__ void __launch_bounds__(kBlockThreads, 2)
    softmax_topk_block_rows(const float* __restrict__ logits, int64_t vocab, int k, int segments,
                            int64_t segment_length, float* __restrict__ probs, int32_t* __restrict__ indices,
                            Key* __restrict__ partial_keys, SoftmaxState* __restrict__ partial_states) {
  __shared__ CandidateBuffer<kBlockCapacity> buf;
  __shared__ SoftmaxState scratch[kBlockThreads / 32];
  const int tid = threadIdx.x;
  const int64_t row = blockIdx.x / segments;
  const int64_t begin = (blockIdx.x % segments) * segment_length;
  const int64_t end = begin + segment_length < vocab ? begin + segment_length : vocab;
  if (tid == 0) reset(buf);
  __syncthreads();

  SoftmaxState st = empty_state();
  scan_columns<kBlockThreads>(logits + row * vocab, begin, end, k, buf, st, tid);
  const int valid = finish<kBlockThreads>(buf, k, tid);
  const SoftmaxState total = group_reduce<kBlockThreads>(st, scratch, tid);
  if (segments == 1) {
    write_answer<kBlockThreads>(buf, valid, k, total, probs + row * k, indices + row * k, tid);
    return;
  }
  Key* out = partial_keys + static_cast<int64_t>(blockIdx.x) * k;
  for (int j = tid; j < k; j += kBlockThreads) out[j] = j < valid ? buf.keys[j] : kSentinelKey;
  if (tid == 0) partial_states[blockIdx.x] = total;
}

// One block per row: the row's answer from its segments' partial results
// (segments <= kBlockThreads). Sentinel keys (short segments) are skipped.
__global__ void __launch_bounds__(kBlockThreads)
    softmax_topk_merge(const Key* __restrict__ partial_keys, const SoftmaxState* __restrict__ partial_states,
                       int segments, int k, float* __restrict__ probs, int32_t* __restrict__ indices) {
  __shared__ CandidateBuffer<kBlockCapacity> buf;
  __shared__ SoftmaxState scratch[kBlockThreads / 32];
  const int tid = threadIdx.x;
  const int64_t row = blockIdx.x;
  if (tid == 0) reset(buf);
  __syncthreads();

  const SoftmaxState st = tid < segments ? partial_states[row * segments + tid] : empty_state();
  const Key* keys = partial_keys + row * segments * k;
  const int64_t n_keys = static_cast<int64_t>(segments) * k;
  for (int64_t base = 0; base < n_keys; base += 4 * kBlockThreads) {  // uniform
    const bool open = buf.has_threshold == 0;
    const float threshold = buf.threshold;
    Key tile[4];
    bool pass[4];
    for (int i = 0; i < 4; ++i) {
      const int64_t at = base + 4 * tid + i;
      tile[i] = at < n_keys ? keys[at] : kSentinelKey;
      pass[i] = tile[i] != kSentinelKey && (open || key_value(tile[i]) > threshold);
    }
    const bool appended = append(buf, tile, pass);
    after_tile<kBlockThreads>(buf, k, tid, appended);
  }
  const int valid = finish<kBlockThreads>(buf, k, tid);
  const SoftmaxState total = group_reduce<kBlockThreads>(st, scratch, tid);
  write_answer<kBlockThreads>(buf, valid, k, total, probs + row * k, indices + row * k, tid);
}

}  // namespace softmax_topk::cuda::detail

#endif  // SOFTMAX_TOPK_CUDA_KERNELS_CUH
