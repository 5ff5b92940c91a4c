// Causal attention over paged K/V on the CPU: the math of the CPU cache's
// attend, on raw pointers (no ABI, no bookkeeping).
//
// Work is cut into tasks of (batch entry, kv head, tile of queries, range of
// key positions). A task keeps the online-softmax state of its rows (the
// tile's queries x the group's query heads) and walks the sequence's blocks:
// each [kBlockTokens, head_dim] tile of K and V is read from memory once and
// used from L1 by every row. When there are too few tasks to occupy the
// threads (one long sequence), key ranges are split and the partial states
// merged with a log-sum-exp rescale afterwards.
#ifndef KV_CACHE_CPU_ATTENTION_CPU_H
#define KV_CACHE_CPU_ATTENTION_CPU_H

#include <cstdint>
#include <vector>

#include "kv_cache/block_layout.h"

namespace kvcache::cpu {

struct AttendShape {
  BlockLayout layout;
  int64_t query_heads = 0;  // Hq, a multiple of layout.kv_heads
  int64_t layer = 0;
};

// One sequence of the batch.
struct BatchEntry {
  const int32_t* blocks = nullptr;  // the sequence's block ids
  int64_t tokens = 0;               // T: tokens of the attended layer
  int64_t queries = 0;              // n <= T: its newest n tokens are the queries
  int64_t first_row = 0;            // its first query's row in q and out ([rows, Hq, d])
};

// One unit of work, see the file comment.
struct Task {
  int32_t entry;  // batch index
  int32_t kv_head;
  int32_t query_begin;  // queries [query_begin, query_begin + query_count) of the entry
  int32_t query_count;
  int64_t key_begin, key_end;  // key positions [key_begin, key_end), before the causal limit
  int64_t partial;             // -1: writes out; else its slot in the partial states
};

// Tasks [first_task, first_task + splits) cover one (entry, kv head, query
// tile) and write partial states to be merged.
struct Merge {
  int64_t first_task, splits;
};

// Scratch reused across calls (one attend at a time per workspace).
struct Workspace {
  std::vector<Task> tasks;
  std::vector<Merge> merges;
  std::vector<float> partials;  // [partial, rows, state_floats(head_dim)]: acc, then m and l as doubles
  std::vector<float> scratch;   // [participant, rows, state_floats(head_dim)]
};

// out[r, h, :] = softmax over the causally visible keys of q[r, h, :] . K / sqrt(d), times V,
// for every query row r of every entry. block_addr[id]: the block with that id.
void attend(const AttendShape& shape, const float* const* block_addr, const BatchEntry* batch, int32_t batch_size,
            const float* q, float* out, Workspace& workspace);

}  // namespace kvcache::cpu

#endif  // KV_CACHE_CPU_ATTENTION_CPU_H
