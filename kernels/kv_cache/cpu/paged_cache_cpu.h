// The project's paged KV cache on the CPU (fp32): a BlockTable for the
// bookkeeping, blocks of host memory carved from slabs, and the attention of
// attention_cpu.h over them. Inside a block (block_layout.h) a K tile is
// stored transposed, [head_dim, kBlockTokens], and a V tile as is,
// [kBlockTokens, head_dim] (row_softmax.h says why). Not tied to the harness ABI: the submission
// submissions/kv_cache/cpu-fast wraps it in a shim.
//
// Memory: slabs (~2 MiB) are allocated when the pool first needs their
// blocks and kept until the cache is destroyed; a released block goes on the
// free list and is reused before any new slab is touched. bytes_in_use()
// counts the blocks owned by live sequences (K/V of every layer plus one
// int32 block-table entry each): what the sequences hold, which the budget
// bounds.
#ifndef KV_CACHE_CPU_PAGED_CACHE_CPU_H
#define KV_CACHE_CPU_PAGED_CACHE_CPU_H

#include <cstdint>
#include <string>
#include <vector>

#include "kv_cache/block_layout.h"
#include "kv_cache/block_table.h"
#include "kv_cache/cpu/attention_cpu.h"

namespace kvcache::cpu {

struct CacheConfig {
  int64_t layers, query_heads, kv_heads, head_dim;
  int64_t max_sequences, max_tokens, memory_budget;
};

class PagedCache {
 public:
  explicit PagedCache(const CacheConfig& config);
  ~PagedCache();
  PagedCache(const PagedCache&) = delete;
  PagedCache& operator=(const PagedCache&) = delete;

  // What one block costs against the budget.
  static int64_t block_bytes(const CacheConfig& config);

  // k, v [n, kv_heads, head_dim]. See BlockTable::grow for the statuses.
  BlockTable::Status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                            std::string* why);

  // q, out [sum n_b, query_heads, head_dim]. False (out untouched) when a
  // sequence is not live or holds fewer than n_b tokens in the layer.
  bool attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths, const float* q,
              float* out, std::string* why);

  bool release(int64_t sequence) { return table_.release(sequence); }
  int64_t bytes_in_use() const { return table_.bytes_in_use(); }

 private:
  // Makes sure blocks [0, blocks) have memory.
  void provide_blocks(int64_t blocks);

  CacheConfig config_;
  BlockLayout layout_;
  BlockTable table_;
  int64_t blocks_per_slab_;
  std::vector<float*> slabs_;       // owned, 64-byte aligned
  std::vector<float*> block_addr_;  // [block id] its first element
  std::vector<BatchEntry> entries_;
  Workspace workspace_;
};

}  // namespace kvcache::cpu

#endif  // KV_CACHE_CPU_PAGED_CACHE_CPU_H
