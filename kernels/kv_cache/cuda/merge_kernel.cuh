// The split-K merge of the CUDA cache: the partial softmax states of a query
// row's key chunks (work_plan.h) combined into its output. Each partial i
// holds m_i (running max, log2 domain), l_i = sum 2^(s - m_i) and the
// unnormalised acc_i = sum 2^(s - m_i) V; with M = max m_i,
//   out = sum_i 2^(m_i - M) acc_i / sum_i 2^(m_i - M) l_i,
// the rescale by 2^(m_i - M) putting every chunk on the common max.
#ifndef KV_CACHE_CUDA_MERGE_KERNEL_CUH
#define KV_CACHE_CUDA_MERGE_KERNEL_CUH

#include <cstdint>

#include "kv_cache/cuda/work_plan.h"

namespace kvcache::cuda {

constexpr int kMergeWarps = 4;

template <typename S>
struct MergeParams {
  const MergeGroup* groups;
  const float* partial_acc;  // [partials, query_heads, head_dim]
  const S* partial_m;        // [partials, query_heads]
  const float* partial_l;    // [partials, query_heads]
  float* out;                // [rows, query_heads, head_dim]
  int32_t query_heads;
  int32_t head_dim;
};

// Grid (groups, ceil(query_heads / kMergeWarps)), kMergeWarps warps: one
// warp per (row, query head), a lane per head_dim / 32 dimensions.
template <typename S>
__global__ void __launch_bounds__(32 * kMergeWarps) merge_kernel(const MergeParams<S> p) {
  const MergeGroup g = p.groups[blockIdx.x];
  const int head = static_cast<int>(blockIdx.y) * kMergeWarps + static_cast<int>(threadIdx.x) / 32;
  if (head >= p.query_heads) return;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  S big = -INFINITY;
  for (int i = 0; i < g.count; ++i) {
    const S m = p.partial_m[static_cast<int64_t>(g.first_partial + i) * p.query_heads + head];
    big = m > big ? m : big;
  }
  float sum = 0.0f;
  for (int i = 0; i < g.count; ++i) {
    const int64_t slot = static_cast<int64_t>(g.first_partial + i) * p.query_heads + head;
    sum += exp2f(static_cast<float>(p.partial_m[slot] - big)) * p.partial_l[slot];
  }
  const float inv = 1.0f / sum;
  float* o = p.out + (static_cast<int64_t>(g.q_row) * p.query_heads + head) * p.head_dim;
  for (int x = lane; x < p.head_dim; x += 32) {
    float total = 0.0f;
    for (int i = 0; i < g.count; ++i) {
      const int64_t slot = static_cast<int64_t>(g.first_partial + i) * p.query_heads + head;
      total += exp2f(static_cast<float>(p.partial_m[slot] - big)) * p.partial_acc[slot * p.head_dim + x];
    }
    o[x] = total * inv;
  }
}

}  // namespace kvcache::cuda

#endif  // KV_CACHE_CUDA_MERGE_KERNEL_CUH
