// How an attend call is cut into thread blocks for the CUDA cache (host
// code, plus the two records the kernels read).
//
// A work item is one query row (a query position of one sequence) against a
// range of its visible key positions; the grid runs every item for every kv
// head (and tile of that head's query heads). Short histories take one item
// per row. When rows x kv heads are too few to fill the GPU (decode at small
// batch, a long context), each row's keys are split into near-equal chunks
// (split-K, "flash-decoding"): every chunk writes a partial softmax state
// (m, l, unnormalised acc) and a merge kernel combines them by log-sum-exp.
#ifndef KV_CACHE_CUDA_WORK_PLAN_H
#define KV_CACHE_CUDA_WORK_PLAN_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kv_cache/block_layout.h"

namespace kvcache::cuda {

struct WorkItem {
  int32_t table_row;  // the sequence's row of the device block table
  int32_t q_row;      // its query's row in q and out ([rows, Hq, d])
  int32_t key_begin;  // keys [key_begin, key_end): key_begin a multiple of kBlockTokens,
  int32_t key_end;    // key_end <= the query's position + 1 (causal)
  int32_t partial;    // -1: normalise into out; else its slot in the partial states
  int32_t pad[3];     // 32 bytes: one aligned load per item
};

// Partial slots [first_partial, first_partial + count) of one query row, in key order.
struct MergeGroup {
  int32_t q_row;
  int32_t first_partial;
  int32_t count;
  int32_t pad;
};

// One sequence of the batch, as the planner needs it.
struct PlanEntry {
  int32_t table_row;
  int64_t tokens;   // T in the attended layer
  int64_t queries;  // n: the newest n tokens are the queries
};

struct Plan {
  std::vector<WorkItem> items;
  std::vector<MergeGroup> merges;
  int32_t partials = 0;
};

// Fills `plan` for a batch. kv_units: thread blocks per item (kv heads x head
// tiles); target_blocks: how many thread blocks keep the GPU busy.
inline void make_plan(const PlanEntry* entries, int32_t batch, int64_t kv_units, int64_t target_blocks,
                      int64_t min_split_keys, Plan* plan) {
  plan->items.clear();
  plan->merges.clear();
  plan->partials = 0;
  int64_t rows = 0, keys = 0;
  for (int32_t b = 0; b < batch; ++b) {
    rows += entries[b].queries;
    // Query i of n sees T - n + i + 1 keys.
    keys += entries[b].queries * (entries[b].tokens - entries[b].queries) +
            entries[b].queries * (entries[b].queries + 1) / 2;
  }
  // Keys per thread block if the work were spread evenly over target_blocks.
  int64_t chunk = INT64_MAX;
  if (rows * kv_units < target_blocks)
    chunk = std::max(min_split_keys, keys * kv_units / std::max<int64_t>(1, target_blocks));
  int32_t row = 0;
  for (int32_t b = 0; b < batch; ++b) {
    const PlanEntry& e = entries[b];
    for (int64_t i = 0; i < e.queries; ++i, ++row) {
      const int64_t visible = e.tokens - e.queries + i + 1;
      const int64_t splits = chunk == INT64_MAX ? 1 : (visible + chunk - 1) / chunk;
      WorkItem item{e.table_row, row, 0, static_cast<int32_t>(visible), -1, {0, 0, 0}};
      if (splits <= 1) {
        plan->items.push_back(item);
        continue;
      }
      // Near-equal chunks, cut on block boundaries.
      const int64_t blocks = (visible + kBlockTokens - 1) / kBlockTokens;
      plan->merges.push_back(MergeGroup{row, plan->partials, static_cast<int32_t>(splits), 0});
      for (int64_t s = 0; s < splits; ++s) {
        item.key_begin = static_cast<int32_t>(blocks * s / splits * kBlockTokens);
        item.key_end = static_cast<int32_t>(std::min(visible, blocks * (s + 1) / splits * kBlockTokens));
        item.partial = plan->partials++;
        plan->items.push_back(item);
      }
    }
  }
}

}  // namespace kvcache::cuda

#endif  // KV_CACHE_CUDA_WORK_PLAN_H
