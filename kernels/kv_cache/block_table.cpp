#include "block_table.h"

#include <algorithm>
#include <limits>

#include "block_layout.h"

namespace kvcache {

namespace {

int64_t blocks_for(int64_t tokens) { return (tokens + kBlockTokens - 1) / kBlockTokens; }

}  // namespace

int64_t BlockTable::pool_blocks(int64_t budget, int64_t bytes_per_block, int64_t max_sequences, int64_t max_tokens) {
  int64_t blocks = budget / bytes_per_block;
  const int64_t per_sequence = blocks_for(max_tokens);
  if (per_sequence <= std::numeric_limits<int64_t>::max() / max_sequences)
    blocks = std::min(blocks, per_sequence * max_sequences);
  return std::min<int64_t>(blocks, std::numeric_limits<int32_t>::max());
}

BlockTable::BlockTable(int64_t layers, int64_t max_sequences, int64_t max_tokens, int64_t bytes_per_block,
                       int64_t max_blocks)
    : layers_(layers),
      max_sequences_(max_sequences),
      max_tokens_(max_tokens),
      bytes_per_block_(bytes_per_block),
      max_blocks_(max_blocks) {}

BlockTable::Status BlockTable::grow(int32_t layer, int64_t id, int64_t n, Grant* grant, std::string* why) {
  auto it = sequences_.find(id);
  const bool starts = it == sequences_.end();
  if (starts && layer != 0) {
    *why = "append to layer " + std::to_string(layer) + " of sequence " + std::to_string(id) +
           ", which is not live: a sequence starts at layer 0";
    return Status::invalid;
  }
  if (starts && static_cast<int64_t>(sequences_.size()) >= max_sequences_) {
    *why = "max_sequences (" + std::to_string(max_sequences_) + ") sequences are live";
    return Status::out_of_memory;
  }
  const int64_t held = starts ? 0 : it->second.tokens[static_cast<size_t>(layer)];
  if (held + n > max_tokens_) {
    *why = "sequence " + std::to_string(id) + " would hold " + std::to_string(held + n) + " tokens, above max_tokens";
    return Status::invalid;
  }
  const int64_t owned = starts ? 0 : static_cast<int64_t>(it->second.blocks.size());
  const int64_t extra = std::max<int64_t>(0, blocks_for(held + n) - owned);
  const int64_t available = static_cast<int64_t>(free_blocks_.size()) + (max_blocks_ - touched_blocks_);
  if (extra > available) {
    *why = "the memory budget holds " + std::to_string(max_blocks_) + " blocks of " + std::to_string(kBlockTokens) +
           " tokens; " + std::to_string(used_blocks_) + " are in use and " + std::to_string(extra) + " more are needed";
    return Status::out_of_memory;
  }

  // Everything that can throw (allocations) happens before any state changes.
  const int64_t fresh = std::max<int64_t>(0, extra - static_cast<int64_t>(free_blocks_.size()));
  if (static_cast<int64_t>(free_blocks_.capacity()) < touched_blocks_ + fresh)
    free_blocks_.reserve(static_cast<size_t>(std::max(2 * touched_blocks_, touched_blocks_ + fresh)));
  if (starts) {
    if (free_slots_.capacity() < static_cast<size_t>(touched_slots_ + 1))
      free_slots_.reserve(static_cast<size_t>(2 * touched_slots_ + 1));
    Sequence fresh_sequence;
    fresh_sequence.tokens.assign(static_cast<size_t>(layers_), 0);
    fresh_sequence.blocks.reserve(static_cast<size_t>(extra));
    it = sequences_.emplace(id, std::move(fresh_sequence)).first;
    if (free_slots_.empty()) {
      it->second.slot = static_cast<int32_t>(touched_slots_++);
    } else {
      it->second.slot = free_slots_.back();
      free_slots_.pop_back();
    }
  } else {
    it->second.blocks.reserve(static_cast<size_t>(owned + extra));
  }

  Sequence& s = it->second;
  for (int64_t b = 0; b < extra; ++b) {
    if (!free_blocks_.empty()) {
      s.blocks.push_back(free_blocks_.back());
      free_blocks_.pop_back();
    } else {
      s.blocks.push_back(static_cast<int32_t>(touched_blocks_++));
    }
  }
  used_blocks_ += extra;
  s.tokens[static_cast<size_t>(layer)] = held + n;
  grant->sequence = &s;
  grant->first_position = held;
  grant->first_new_block = static_cast<size_t>(owned);
  return Status::ok;
}

const Sequence* BlockTable::find(int64_t id) const {
  const auto it = sequences_.find(id);
  return it == sequences_.end() ? nullptr : &it->second;
}

bool BlockTable::release(int64_t id) {
  const auto it = sequences_.find(id);
  if (it == sequences_.end()) return false;
  const Sequence& s = it->second;
  // Reversed, so that the sequence's first block is the next one handed out.
  for (auto b = s.blocks.rbegin(); b != s.blocks.rend(); ++b) free_blocks_.push_back(*b);
  used_blocks_ -= static_cast<int64_t>(s.blocks.size());
  free_slots_.push_back(s.slot);
  sequences_.erase(it);
  return true;
}

}  // namespace kvcache
