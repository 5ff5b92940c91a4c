#include "paged_cache_cpu.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace kvcache::cpu {

namespace {

constexpr int64_t kSlabBytes = int64_t{2} << 20;
constexpr std::align_val_t kAlign{64};

}  // namespace

int64_t PagedCache::block_bytes(const CacheConfig& config) {
  return layout_of(config).block_elems() * static_cast<int64_t>(sizeof(float)) + static_cast<int64_t>(sizeof(int32_t));
}

PagedCache::PagedCache(const CacheConfig& config)
    : config_(config),
      layout_(layout_of(config)),
      table_(
          config.layers, config.max_sequences, config.max_tokens, block_bytes(config),
          BlockTable::pool_blocks(config.memory_budget, block_bytes(config), config.max_sequences, config.max_tokens)),
      blocks_per_slab_(std::max<int64_t>(1, kSlabBytes / block_bytes(config))) {}

PagedCache::~PagedCache() {
  for (float* slab : slabs_) ::operator delete(slab, kAlign);
}

void PagedCache::provide_blocks(int64_t blocks) {
  blocks = std::min(blocks, table_.max_blocks());
  const int64_t elems = layout_.block_elems();
  while (static_cast<int64_t>(block_addr_.size()) < blocks) {
    const int64_t first = static_cast<int64_t>(block_addr_.size());
    const int64_t count = std::min(blocks_per_slab_, table_.max_blocks() - first);
    block_addr_.reserve(static_cast<size_t>(first + count));
    slabs_.reserve(slabs_.size() + 1);
    float* slab = static_cast<float*>(::operator new(static_cast<size_t>(count * elems) * sizeof(float), kAlign));
    slabs_.push_back(slab);
    for (int64_t b = 0; b < count; ++b) block_addr_.push_back(slab + b * elems);
  }
}

BlockTable::Status PagedCache::append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                                      std::string* why) {
  // An append adds at most ceil(n / kBlockTokens) blocks. Their memory is
  // provided first, so that the grow below cannot fail halfway.
  provide_blocks(table_.blocks_touched() + (n + kBlockTokens - 1) / kBlockTokens);
  BlockTable::Grant grant;
  const BlockTable::Status status = table_.grow(layer, sequence, n, &grant, why);
  if (status != BlockTable::Status::ok) return status;

  const int64_t d = layout_.head_dim, heads = layout_.kv_heads;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t pos = grant.first_position + t;
    float* base = block_addr_[static_cast<size_t>(grant.sequence->blocks[static_cast<size_t>(pos / kBlockTokens)])];
    const int64_t slot = pos % kBlockTokens;
    for (int64_t h = 0; h < heads; ++h) {
      const float* kh = k + (t * heads + h) * d;
      float* kt = base + layout_.k_tile(layer, h) + slot;  // K tile transposed: [d, kBlockTokens]
      for (int64_t x = 0; x < d; ++x) kt[x * kBlockTokens] = kh[x];
      std::memcpy(base + layout_.v_tile(layer, h) + slot * d, v + (t * heads + h) * d,
                  static_cast<size_t>(d) * sizeof(float));
    }
  }
  return BlockTable::Status::ok;
}

bool PagedCache::attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, std::string* why) {
  entries_.resize(static_cast<size_t>(batch));
  int64_t row = 0;
  for (int32_t b = 0; b < batch; ++b) {
    const Sequence* s = table_.find(sequences[b]);
    if (s == nullptr) {
      *why = "attend: sequence " + std::to_string(sequences[b]) + " is not live";
      return false;
    }
    const int64_t tokens = s->tokens[static_cast<size_t>(layer)];
    if (query_lengths[b] > tokens) {
      *why = "attend: sequence " + std::to_string(sequences[b]) + " holds " + std::to_string(tokens) +
             " tokens in layer " + std::to_string(layer) + ", fewer than its " + std::to_string(query_lengths[b]) +
             " queries";
      return false;
    }
    entries_[static_cast<size_t>(b)] = BatchEntry{s->blocks.data(), tokens, query_lengths[b], row};
    row += query_lengths[b];
  }
  AttendShape shape;
  shape.layout = layout_;
  shape.query_heads = config_.query_heads;
  shape.layer = layer;
  cpu::attend(shape, block_addr_.data(), entries_.data(), batch, q, out, workspace_);
  return true;
}

}  // namespace kvcache::cpu
