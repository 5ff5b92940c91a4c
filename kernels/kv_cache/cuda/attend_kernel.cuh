// The attention kernel of the CUDA cache, for decode and prefill rows alike:
// one thread block per (work item, kv head, tile of GT of that kv head's
// query heads); see work_plan.h for items.
//
// Four warps share the item's key range block by block (8 tokens each). A
// warp lane owns VEC = head_dim / 32 consecutive dimensions: a token's K row
// is one vector load per lane, and the warp reads a whole [8, head_dim] K and
// V tile at once (8 KiB in flight per warp at d = 128, fp32). Each tile is
// read once from memory for all GT query heads of the group (GQA), which
// keep their query and online-softmax state in registers.
//
// Scores: per lane, 8 partial dot products per head (one per token), summed
// across the warp by a transposing butterfly (9 shuffles for 8 tokens rather
// than 5 per token), after which each group of 4 lanes holds one token's
// score: the exp is taken once per lane, and max and sum take 3 shuffles.
// Scores live in the log2 domain (q pre-scaled by log2(e)/sqrt(d)) in type
// S: double for the fp32 cache, whose tolerance a float score would use up
// once scores reach a few hundred (a float score is off by ~|s| * 6e-8, and
// exp passes that on to each weight as a relative error); float for fp16.
#ifndef KV_CACHE_CUDA_ATTEND_KERNEL_CUH
#define KV_CACHE_CUDA_ATTEND_KERNEL_CUH

#include <cstdint>

#include "kv_cache/block_layout.h"
#include "kv_cache/cuda/element_io.cuh"
#include "kv_cache/cuda/work_plan.h"

namespace kvcache::cuda {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr unsigned kFullMask = 0xffffffffu;

template <typename T, typename S>
struct AttendParams {
  const T* pool;         // [pool blocks, layout.block_elems()]
  const int32_t* table;  // [max_sequences, table_stride] block ids
  int64_t table_stride;
  const WorkItem* items;
  const float* q;      // [rows, query_heads, head_dim]
  float* out;          // [rows, query_heads, head_dim]
  float* partial_acc;  // [partials, query_heads, head_dim] unnormalised
  S* partial_m;        // [partials, query_heads] running max, log2 domain
  float* partial_l;    // [partials, query_heads] sum of exp2(s - m)
  BlockLayout layout;
  int64_t block_elems;  // layout.block_elems()
  int32_t layer;
  int32_t query_heads;
  int32_t group;       // query heads per kv head
  int32_t head_tiles;  // group / GT
  S q_scale;           // log2(e) / sqrt(head_dim)

  // Element offset of (block id, offset inside a block) in the pool.
  __device__ __forceinline__ int64_t at(int32_t block, int64_t offset) const {
    return static_cast<int64_t>(block) * block_elems + offset;
  }
};

// v[t] summed over the warp's 32 lanes for t = 0..7; lane l gets the sum of
// t = (l >> 2) & 7. Each step hands half of the values still held to the
// partner lane and keeps the other half: 4 + 2 + 1 shuffles, then 2 more
// to finish the sums within groups of 4 lanes.
template <typename S>
__device__ __forceinline__ S reduce8(const S (&v)[8], int lane) {
  const bool b4 = (lane & 16) != 0, b3 = (lane & 8) != 0, b2 = (lane & 4) != 0;
  S w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const S keep = b4 ? v[i + 4] : v[i];
    const S give = b4 ? v[i] : v[i + 4];
    w[i] = keep + __shfl_xor_sync(kFullMask, give, 16);
  }
  S x[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const S keep = b3 ? w[i + 2] : w[i];
    const S give = b3 ? w[i] : w[i + 2];
    x[i] = keep + __shfl_xor_sync(kFullMask, give, 8);
  }
  S y = (b2 ? x[1] : x[0]) + __shfl_xor_sync(kFullMask, b2 ? x[0] : x[1], 4);
  y += __shfl_xor_sync(kFullMask, y, 2);
  y += __shfl_xor_sync(kFullMask, y, 1);
  return y;
}

// Reduces over the 8 tokens held by lane groups (lanes differing in bits 2-4).
template <typename S, typename Op>
__device__ __forceinline__ S across_tokens(S v, Op op) {
  v = op(v, __shfl_xor_sync(kFullMask, v, 4));
  v = op(v, __shfl_xor_sync(kFullMask, v, 8));
  return op(v, __shfl_xor_sync(kFullMask, v, 16));
}

__device__ __forceinline__ void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

template <int VEC, int GT, typename T, typename S>
__global__ void __launch_bounds__(kThreads) attend_kernel(const AttendParams<T, S> p) {
  constexpr int kDim = 32 * VEC;
  const WorkItem item = p.items[blockIdx.x];
  const int kv_head = static_cast<int>(blockIdx.y) / p.head_tiles;
  const int head0 = kv_head * p.group + (static_cast<int>(blockIdx.y) % p.head_tiles) * GT;
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int token = (lane >> 2) & 7;  // whose score this lane holds after reduce8

  S q[GT][VEC];
  float acc[GT][VEC];
  S m[GT];
  float l[GT];
#pragma unroll
  for (int h = 0; h < GT; ++h) {
    const float* qh = p.q + (static_cast<int64_t>(item.q_row) * p.query_heads + head0 + h) * kDim + lane * VEC;
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
      q[h][v] = static_cast<S>(qh[v]) * p.q_scale;
      acc[h][v] = 0.0f;
    }
    m[h] = -INFINITY;
    l[h] = 0.0f;
  }

  const int32_t* blocks = p.table + static_cast<int64_t>(item.table_row) * p.table_stride;
  const int64_t k_offset = p.layout.k_tile(p.layer, kv_head);
  const int64_t plane = p.layout.plane_elems();
  const int tile_bytes = kBlockTokens * kDim * static_cast<int>(sizeof(T));
  const int last = static_cast<int>((item.key_end + kBlockTokens - 1) / kBlockTokens);
  for (int blk = static_cast<int>(item.key_begin / kBlockTokens) + warp; blk < last; blk += kWarps) {
    // This warp's next tile goes to L2 while the current one is computed.
    if (blk + kWarps < last && lane * 128 < tile_bytes) {
      const char* next = reinterpret_cast<const char*>(p.pool + p.at(blocks[blk + kWarps], k_offset));
      prefetch_l2(next + lane * 128);
      prefetch_l2(next + plane * static_cast<int64_t>(sizeof(T)) + lane * 128);
    }
    const T* kp = p.pool + p.at(blocks[blk], k_offset) + lane * VEC;
    const T* vp = kp + plane;
    // Positions past key_end may hold anything (stale tokens, never-written
    // memory, NaN patterns): their V must not reach a 0 * NaN.
    const int count = static_cast<int>(min(kBlockTokens, item.key_end - blk * kBlockTokens));
    float kf[kBlockTokens][VEC], vf[kBlockTokens][VEC];
#pragma unroll
    for (int t = 0; t < kBlockTokens; ++t) {
      if (t < count) {
        Storage<T>::template load<VEC>(kp + t * kDim, kf[t]);
        Storage<T>::template load<VEC>(vp + t * kDim, vf[t]);
      } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v) kf[t][v] = vf[t][v] = 0.0f;
      }
    }
#pragma unroll
    for (int h = 0; h < GT; ++h) {
      S part[kBlockTokens];
#pragma unroll
      for (int t = 0; t < kBlockTokens; ++t) {
        S s = 0;
#pragma unroll
        for (int v = 0; v < VEC; ++v) s += q[h][v] * static_cast<S>(kf[t][v]);
        part[t] = s;
      }
      S score = reduce8(part, lane);
      if (token >= count) score = -INFINITY;
      const S tile_max = across_tokens(score, [](S a, S b) { return a > b ? a : b; });
      const S new_m = m[h] > tile_max ? m[h] : tile_max;
      // The running max is subtracted before exp2: raw scores of a few
      // hundred would overflow float. The first tile rescales 0 * 2^-inf.
      const float alpha = exp2f(static_cast<float>(m[h] - new_m));
      const float pt = exp2f(static_cast<float>(score - new_m));
      l[h] = l[h] * alpha + across_tokens(pt, [](float a, float b) { return a + b; });
      m[h] = new_m;
#pragma unroll
      for (int v = 0; v < VEC; ++v) acc[h][v] *= alpha;
#pragma unroll
      for (int t = 0; t < kBlockTokens; ++t) {
        const float pv = __shfl_sync(kFullMask, pt, t * 4);
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[h][v] += pv * vf[t][v];
      }
    }
  }

  // The four warps' states, merged through shared memory.
  __shared__ S sm_m[kWarps][GT];
  __shared__ float sm_l[kWarps][GT];
  __shared__ float sm_acc[kWarps][GT][kDim];
#pragma unroll
  for (int h = 0; h < GT; ++h) {
    if (lane == 0) {
      sm_m[warp][h] = m[h];
      sm_l[warp][h] = l[h];
    }
#pragma unroll
    for (int v = 0; v < VEC; ++v) sm_acc[warp][h][lane * VEC + v] = acc[h][v];
  }
  __syncthreads();
  for (int h = warp; h < GT; h += kWarps) {
    S big = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) big = sm_m[w][h] > big ? sm_m[w][h] : big;
    float sum = 0.0f, total[VEC] = {};
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float f = exp2f(static_cast<float>(sm_m[w][h] - big));  // 0 for a warp that saw no key
      sum += f * sm_l[w][h];
#pragma unroll
      for (int v = 0; v < VEC; ++v) total[v] += f * sm_acc[w][h][lane * VEC + v];
    }
    const int64_t head = head0 + h;
    if (item.partial < 0) {
      float* o = p.out + (static_cast<int64_t>(item.q_row) * p.query_heads + head) * kDim + lane * VEC;
      const float inv = 1.0f / sum;
#pragma unroll
      for (int v = 0; v < VEC; ++v) o[v] = total[v] * inv;
    } else {
      const int64_t slot = static_cast<int64_t>(item.partial) * p.query_heads + head;
      float* o = p.partial_acc + slot * kDim + lane * VEC;
#pragma unroll
      for (int v = 0; v < VEC; ++v) o[v] = total[v];
      if (lane == 0) {
        p.partial_m[slot] = big;
        p.partial_l[slot] = sum;
      }
    }
  }
}

}  // namespace kvcache::cuda

#endif  // KV_CACHE_CUDA_ATTEND_KERNEL_CUH
