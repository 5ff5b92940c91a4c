// The append of the CUDA cache: n new tokens of one layer, k and v [n,
// kv_heads, head_dim] float32 in device memory, scattered into their blocks
// (converted to the storage type). The block ids come from the device block
// table, which the host updated earlier on the same stream.
#ifndef KV_CACHE_CUDA_APPEND_KERNEL_CUH
#define KV_CACHE_CUDA_APPEND_KERNEL_CUH

#include <cstdint>

#include "kv_cache/block_layout.h"
#include "kv_cache/cuda/element_io.cuh"

namespace kvcache::cuda {

template <typename T>
struct AppendParams {
  T* pool;                // [pool blocks, block_elems]
  const int32_t* blocks;  // the sequence's row of the device block table
  const float* k;         // [n, kv_heads, head_dim]
  const float* v;
  BlockLayout layout;
  int64_t block_elems;
  int64_t first_position;  // of the first new token
  int64_t n;
  int32_t layer;
};

// A grid-stride loop over the n * kv_heads * head_dim elements of K (and V);
// consecutive threads take consecutive dimensions of a row, so the reads are
// coalesced and each row's writes land in one contiguous tile row.
template <typename T>
__global__ void append_kernel(const AppendParams<T> p) {
  const int64_t d = p.layout.head_dim, heads = p.layout.kv_heads;
  const int64_t total = p.n * heads * d;
  const int64_t plane = p.layout.plane_elems();
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t x = i % d, h = (i / d) % heads, t = i / (d * heads);
    const int64_t pos = p.first_position + t;
    const int64_t dst = static_cast<int64_t>(p.blocks[pos / kBlockTokens]) * p.block_elems +
                        p.layout.k_tile(p.layer, h) + (pos % kBlockTokens) * d + x;
    p.pool[dst] = Storage<T>::from_float(p.k[i]);
    p.pool[dst + plane] = Storage<T>::from_float(p.v[i]);
  }
}

}  // namespace kvcache::cuda

#endif  // KV_CACHE_CUDA_APPEND_KERNEL_CUH
