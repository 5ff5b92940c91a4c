// Where a token's K and V live in a paged cache block, shared by the CPU and
// CUDA caches (host and device code).
//
// A block holds kBlockTokens consecutive positions of one sequence for every
// layer, K and V:
//   block [layers, 2 (K, V), kv_heads, kBlockTokens, head_dim] elements
// so that one kv head of one layer is a contiguous [kBlockTokens, head_dim]
// tile (4 KiB at d = 128, fp32): attention streams it with whole cache lines
// and keeps it in L1 while every query head of the group uses it. All layers
// share the block because they receive the same tokens (layer 0 first): the
// append of layer 0 allocates, the other layers only fill, so an append can
// run out of memory only at layer 0, before any layer has changed.
#ifndef KV_CACHE_BLOCK_LAYOUT_H
#define KV_CACHE_BLOCK_LAYOUT_H

#include <cstdint>

#if defined(__CUDACC__)
#define KV_CACHE_HD __host__ __device__
#else
#define KV_CACHE_HD
#endif

namespace kvcache {

// 8 tokens: a sequence wastes at most 7 positions in its last block (4% at
// 100 tokens, where 16 would waste 12%), and a tile is still a whole number
// of 4 KiB pages at d = 128 in fp32.
constexpr int64_t kBlockTokens = 8;

struct BlockLayout {
  int64_t layers = 0, kv_heads = 0, head_dim = 0;

  // [kBlockTokens, head_dim]: one kv head of one layer, K or V.
  KV_CACHE_HD int64_t tile_elems() const { return kBlockTokens * head_dim; }
  // [kv_heads, kBlockTokens, head_dim]: K (or V) of one layer.
  KV_CACHE_HD int64_t plane_elems() const { return kv_heads * tile_elems(); }
  // The whole block.
  KV_CACHE_HD int64_t block_elems() const { return layers * 2 * plane_elems(); }
  // Offset of the K tile of (layer, kv head) inside a block; V follows one plane later.
  KV_CACHE_HD int64_t k_tile(int64_t layer, int64_t head) const {
    return layer * 2 * plane_elems() + head * tile_elems();
  }
  KV_CACHE_HD int64_t v_tile(int64_t layer, int64_t head) const { return k_tile(layer, head) + plane_elems(); }
};

// The layout of a cache's config (the CPU's and the CUDA cache's CacheConfig
// both name layers, kv_heads and head_dim).
template <class Config>
BlockLayout layout_of(const Config& c) {
  BlockLayout l;
  l.layers = c.layers;
  l.kv_heads = c.kv_heads;
  l.head_dim = c.head_dim;
  return l;
}

}  // namespace kvcache

#endif  // KV_CACHE_BLOCK_LAYOUT_H
