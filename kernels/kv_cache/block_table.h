// The host-side bookkeeping of a paged KV cache, shared by the CPU and CUDA
// caches: which blocks each live sequence owns, how many tokens each layer of
// it holds, the free list, and the memory budget. It owns no K/V storage; the
// caches map block ids to memory (host pointers, or offsets into a device
// pool).
//
// Invariants:
//   - a block id is owned by at most one live sequence, or is on the free list,
//     or has never been handed out (ids >= blocks_touched());
//   - a sequence owns exactly ceil(max over layers of tokens / kBlockTokens)
//     blocks: memory follows use, up to the last partial block;
//   - bytes_in_use() = owned blocks * bytes_per_block <= the budget, always;
//   - a failed grow() changes nothing.
#ifndef KV_CACHE_BLOCK_TABLE_H
#define KV_CACHE_BLOCK_TABLE_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvcache {

struct Sequence {
  int32_t slot = 0;             // in [0, max_sequences), reused after release (the CUDA table row)
  std::vector<int32_t> blocks;  // position t lives in block blocks[t / kBlockTokens]
  std::vector<int64_t> tokens;  // [layers] tokens held by each layer
};

class BlockTable {
 public:
  enum class Status { ok, out_of_memory, invalid };

  // What a successful grow() gave: the sequence, where the new tokens start,
  // and the index in sequence->blocks of its first newly added block.
  struct Grant {
    const Sequence* sequence = nullptr;
    int64_t first_position = 0;
    size_t first_new_block = 0;
  };

  // Blocks a pool may hold: what the budget pays for, no more than every
  // sequence at max_tokens could use, and ids that fit an int32.
  static int64_t pool_blocks(int64_t budget, int64_t bytes_per_block, int64_t max_sequences, int64_t max_tokens);

  // bytes_per_block: what one block costs against the budget (its K/V for
  // all layers plus its block-table entry); max_blocks: the pool's size.
  BlockTable(int64_t layers, int64_t max_sequences, int64_t max_tokens, int64_t bytes_per_block, int64_t max_blocks);

  // Makes room for n more tokens in `layer` of sequence `id` (starting the
  // sequence when it is not live; that must be at layer 0) and counts them.
  // out_of_memory: the blocks, or a new sequence, would not fit; invalid:
  // the call breaks the contract (*why says how). Neither changes anything.
  Status grow(int32_t layer, int64_t id, int64_t n, Grant* grant, std::string* why);

  // The live sequence `id`, or null.
  const Sequence* find(int64_t id) const;

  // Ends sequence `id`; its blocks go on the free list, to be handed out
  // again before any block that was never used. False when it is not live.
  bool release(int64_t id);

  int64_t bytes_in_use() const { return used_blocks_ * bytes_per_block_; }
  int64_t max_blocks() const { return max_blocks_; }
  // Block ids handed out so far are all < blocks_touched(): the storage that must exist.
  int64_t blocks_touched() const { return touched_blocks_; }

 private:
  int64_t layers_, max_sequences_, max_tokens_, bytes_per_block_, max_blocks_;
  std::unordered_map<int64_t, Sequence> sequences_;
  std::vector<int32_t> free_blocks_;  // a stack: the most recently released block is reused first
  std::vector<int32_t> free_slots_;
  int64_t touched_blocks_ = 0;  // ids [0, touched_blocks_) have been handed out at least once
  int64_t touched_slots_ = 0;
  int64_t used_blocks_ = 0;
};

}  // namespace kvcache

#endif  // KV_CACHE_BLOCK_TABLE_H
