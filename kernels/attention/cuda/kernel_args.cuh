// What the attention kernels receive: the shape as int (supported() keeps
// every size and position below 2^31 - 256) and the tensors.
#ifndef ATTENTION_CUDA_KERNEL_ARGS_CUH
#define ATTENTION_CUDA_KERNEL_ARGS_CUH

#include <cstdint>

#include "attention_cuda.cuh"

namespace attention::cuda::detail {

struct Geometry {
  int heads_q = 1;
  int heads_kv = 1;
  int group = 1;  // heads_q / heads_kv: query head h reads kv head h / group
  int n_q = 1;
  int n_kv = 1;
  int dim = 1;
  float scale = 1.0f;
  bool causal = false;
  bool vec4 = false;  // dim % 4 == 0 and every input 16-byte aligned: tiles load as float4
};

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The kernels' view of a shape that supported() accepted; inputs_aligned:
// every input 16-byte aligned.
inline Geometry geometry(const Shape& s, bool inputs_aligned) {
  Geometry g;
  g.heads_q = static_cast<int>(s.heads_q);
  g.heads_kv = static_cast<int>(s.heads_kv);
  g.group = static_cast<int>(s.heads_q / s.heads_kv);
  g.n_q = static_cast<int>(s.n_q);
  g.n_kv = static_cast<int>(s.n_kv);
  g.dim = static_cast<int>(s.dim);
  g.scale = s.scale;
  g.causal = s.causal;
  g.vec4 = s.dim % 4 == 0 && inputs_aligned;
  return g;
}

struct ForwardArgs {
  Geometry g;
  const float* q;
  const float* k;
  const float* v;
  float* o;
  float* lse;
};

struct BackwardArgs {
  Geometry g;
  const float* q;
  const float* k;
  const float* v;
  const float* o;
  const float* lse;
  const float* dout;
  float* dq;
  float* dk;
  float* dv;
};

// The tile of `rows` queries of this block, in a grid of one block per
// (batch, query head, query tile) that takes the last tiles first (under
// the causal mask they see the most keys, and the grid's tail then holds
// the short ones): its first query, batch * heads_q + its query head, and
// batch * heads_kv + the kv head that head reads.
struct QueryTile {
  int q0;
  int64_t bh;
  int64_t bkv;
};

__device__ __forceinline__ QueryTile query_tile_of_block(const Geometry& g, int rows) {
  const int tiles = (g.n_q + rows - 1) / rows;
  const int tile = tiles - 1 - static_cast<int>(blockIdx.x % tiles);
  const int64_t bh = blockIdx.x / tiles;
  return QueryTile{tile * rows, bh, bh / g.heads_q * g.heads_kv + bh % g.heads_q / g.group};
}

// The tile of `rows` keys of this block, in a grid of one block per
// (batch, kv head, key tile) that takes the first tiles first (under the
// causal mask they are seen most): its first key, batch * heads_kv + its kv
// head, and batch * heads_q + the first query head of that kv head's group.
struct KeyTile {
  int k0;
  int64_t bkv;
  int64_t bh0;
};

__device__ __forceinline__ KeyTile key_tile_of_block(const Geometry& g, int rows) {
  const int tiles = (g.n_kv + rows - 1) / rows;
  const int tile = static_cast<int>(blockIdx.x % tiles);
  const int64_t bkv = blockIdx.x / tiles;
  return KeyTile{tile * rows, bkv, bkv / g.heads_kv * g.heads_q + bkv % g.heads_kv * g.group};
}

// Query i sees key j: both inside the tensors (tiles run past their ends)
// and, under the causal mask, j <= i + n_kv - n_q, written so that nothing
// overflows.
__device__ __forceinline__ bool visible(const Geometry& g, int i, int j) {
  return i < g.n_q && j < g.n_kv && (!g.causal || j - g.n_kv <= i - g.n_q);
}

// Keys [0, key_end) hold every key that some query of [q0, q0 + rows) sees;
// 0 when the causal mask hides every key from all of them.
__device__ __forceinline__ int key_end(const Geometry& g, int q0, int rows) {
  if (!g.causal) return g.n_kv;
  const int last = min(q0 + rows, g.n_q) - 1;
  return max(0, min(g.n_kv, last + 1 - g.n_q + g.n_kv));
}

// The first query that sees any key from k0 on: under the causal mask,
// query i sees key k0 when i >= k0 - (n_kv - n_q).
__device__ __forceinline__ int query_begin(const Geometry& g, int k0) {
  return g.causal ? max(0, k0 - g.n_kv + g.n_q) : 0;
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_KERNEL_ARGS_CUH
