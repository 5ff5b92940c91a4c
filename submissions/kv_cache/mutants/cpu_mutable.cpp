// A plausible single-threaded paged KV cache, the common source of the CPU
// mutants and of the exploits of ../exploits/cpu-*. Each mutant's
// submission.json defines one MUTANT_* macro that switches on one realistic
// bug, each exploit one EXPLOIT_* macro that switches on one attack; with
// none defined the implementation is correct (it is never shipped that way:
// cpu-fast and cpu-naive are).
//
// Design: blocks of kBlock tokens, [layers, 2 (K, V), kBlock, kv_heads,
// head_dim] floats each, in a pool that grows on demand up to what the
// budget pays for; a LIFO free list; a block table per sequence. Each block
// also records how many of its positions have been written (`filled_`), which
// the attention of a sequence's newest token uses as the count of the block
// holding it. Scores are dot products in double; the online softmax keeps its
// running max in double and its sums in float.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "abi_support.h"
#include "half.h"

namespace {

constexpr int64_t kBlock = 16;

class MutableCache final : public kv_abi::Cache {
 public:
  explicit MutableCache(const kv_cache_config& c)
      : c_(c),
        row_(int64_t{c.kv_heads} * c.head_dim),
        block_elems_(int64_t{c.layers} * 2 * kBlock * row_),
        block_bytes_(block_elems_ * static_cast<int64_t>(sizeof(float))),
#ifdef MUTANT_BUDGET_PER_LAYER
        // (the pool is bounded by the per-layer charge below instead)
        max_blocks_(int64_t{1} << 30),
#else
        max_blocks_(std::min<int64_t>(c.memory_budget / block_bytes_, int64_t{1} << 30)),
#endif
        slice_bytes_(block_bytes_ / c.layers) {
  }

  harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v, void*) override {
    auto it = sequences_.find(sequence);
    if (it == sequences_.end()) {
#ifdef MUTANT_SLOTS_NEVER_REUSED
      // Bug: sequences get slot numbers from a counter that only grows, and
      // a slot number of max_sequences or more counts as "no slot left":
      // the (max_sequences + 1)-th sequence ever started is refused, however
      // many have been released.
      const size_t slots_taken = static_cast<size_t>(slots_handed_out_);
#else
      const size_t slots_taken = sequences_.size();
#endif
      const harness_status admitted = kv_abi::check_new_sequence(layer, slots_taken, c_);
      if (admitted != HARNESS_STATUS_OK) return admitted;
    }
    const int64_t held = it == sequences_.end() ? 0 : it->second.tokens[static_cast<size_t>(layer)];
    if (held + n > c_.max_tokens) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "append: past max_tokens");
#ifdef MUTANT_BUDGET_PER_LAYER
    // Bug: the budget is charged layer by layer (each layer's slice of a
    // block) and checked for this layer's slices alone: a chunk with room
    // for one layer's share is accepted at layer 0 and refused at layer 1,
    // half appended.
    const int64_t layer_slices =
        (held + n + kBlock - 1) / kBlock - (it == sequences_.end() ? 0 : it->second.slices[static_cast<size_t>(layer)]);
    if ((slices_charged_ + layer_slices) * slice_bytes_ > c_.memory_budget)
      return kv_abi::fail(HARNESS_STATUS_OUT_OF_MEMORY, "append: this layer's blocks would pass the budget");
#endif
    const int64_t owned = it == sequences_.end() ? 0 : static_cast<int64_t>(it->second.blocks.size());
    const int64_t needed = std::max<int64_t>(0, (held + n + kBlock - 1) / kBlock - owned);
    const int64_t available = static_cast<int64_t>(free_.size()) + max_blocks_ + leaked_ - fresh_;
    std::vector<int32_t> stolen;
    if (needed > available) {
#ifdef MUTANT_OVERWRITE_PAST_BUDGET
      // Bug: when the pool runs dry, the missing blocks are reclaimed from
      // the tail of another live sequence (meant as eviction), but the victim
      // keeps them in its block table: it reads whatever this append writes.
      for (auto& other : sequences_) {
        if (other.first == sequence) continue;
        for (auto b = other.second.blocks.rbegin();
             b != other.second.blocks.rend() && available + static_cast<int64_t>(stolen.size()) < needed; ++b)
          stolen.push_back(*b);
      }
      if (available + static_cast<int64_t>(stolen.size()) < needed)
        return kv_abi::fail(HARNESS_STATUS_OUT_OF_MEMORY, "append: the pool is full");
#else
      return kv_abi::fail(HARNESS_STATUS_OUT_OF_MEMORY, "append: the pool is full");
#endif
    }
    if (it == sequences_.end()) {
      Sequence s;
      s.tokens.assign(static_cast<size_t>(c_.layers), 0);
      s.slices.assign(static_cast<size_t>(c_.layers), 0);
      it = sequences_.emplace(sequence, std::move(s)).first;
      ++slots_handed_out_;
    }
    Sequence& s = it->second;
    for (int64_t b = 0; b < needed; ++b) s.blocks.push_back(take_block(&stolen));
    for (int64_t t = 0; t < n; ++t) {
      const int64_t pos = held + t;
      const int32_t id = s.blocks[static_cast<size_t>(pos / kBlock)];
      float* kd = pool_.data() + id * block_elems_ + (int64_t{layer} * 2 * kBlock + pos % kBlock) * row_;
#ifdef EXPLOIT_HALF_WHEN_LONG
      if (pos >= kHalfFrom) {
        store_halves(k + t * row_, kd);
        store_halves(v + t * row_, kd + kBlock * row_);
      } else
#endif
      {
        std::copy(k + t * row_, k + (t + 1) * row_, kd);
        std::copy(v + t * row_, v + (t + 1) * row_, kd + kBlock * row_);
      }
      filled_[static_cast<size_t>(id)] =
          std::max<int32_t>(filled_[static_cast<size_t>(id)], static_cast<int32_t>(pos % kBlock + 1));
    }
    s.tokens[static_cast<size_t>(layer)] = held + n;
    ++changes_;
#ifdef EXPLOIT_RESERVE_MAX_LENGTH
    // Attack: every sequence reserves (and touches) room for max_tokens on
    // its first append, outside the pool that bytes_in_use counts.
    std::vector<float>& reserved = reservations_[sequence];
    if (reserved.empty()) reserved.assign(static_cast<size_t>(c_.max_tokens * c_.layers * 2 * row_), 1.0f);
#endif
#ifdef MUTANT_BUDGET_PER_LAYER
    s.slices[static_cast<size_t>(layer)] += layer_slices;
    slices_charged_ += layer_slices;
#endif
    return HARNESS_STATUS_OK;
  }

  harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, void*) override {
#if defined(EXPLOIT_REPLAY_ATTEND) || defined(EXPLOIT_REPLAY_SPIN)
    // Attack: an attend on the same query buffer (by address) of an
    // unchanged cache returns the answer it gave before, without reading a
    // single key. EXPLOIT_REPLAY_SPIN then waits as long as reading the
    // keys and values at 8 GB/s would take, so its speed looks plausible.
    int64_t query_rows = 0;
    for (int32_t b = 0; b < batch; ++b) query_rows += query_lengths[b];
    const int64_t out_elems = query_rows * c_.query_heads * c_.head_dim;
    const auto key = std::make_tuple(layer, q, out, changes_);
    const auto hit = replays_.find(key);
    if (hit != replays_.end()) {
      std::memcpy(out, hit->second.data(), hit->second.size() * sizeof(float));
#ifdef EXPLOIT_REPLAY_SPIN
      double bytes = 0;
      for (int32_t b = 0; b < batch; ++b) {
        const auto it = sequences_.find(sequences[b]);
        if (it != sequences_.end())
          bytes += 8.0 * static_cast<double>(it->second.tokens[static_cast<size_t>(layer)] * row_);
      }
      const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(bytes / 8.0));
      while (std::chrono::steady_clock::now() < until) {
      }
#endif
      return HARNESS_STATUS_OK;
    }
#endif
    int64_t row = 0;
    for (int32_t b = 0; b < batch; ++b) {
      const auto it = sequences_.find(sequences[b]);
      if (it == sequences_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: sequence not live");
      const int64_t tokens = it->second.tokens[static_cast<size_t>(layer)];
      if (query_lengths[b] > tokens) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: too many queries");
      for (int64_t i = 0; i < query_lengths[b]; ++i, ++row) {
        const int64_t pos = tokens - query_lengths[b] + i;
        for (int64_t h = 0; h < c_.query_heads; ++h) attend_row(it->second, layer, tokens, pos, h, q, out, row);
      }
    }
#if defined(EXPLOIT_REPLAY_ATTEND) || defined(EXPLOIT_REPLAY_SPIN)
    replays_[key].assign(out, out + out_elems);
#endif
    return HARNESS_STATUS_OK;
  }

  harness_status release(int64_t sequence) override {
    const auto it = sequences_.find(sequence);
    if (it == sequences_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "release: not live");
#if defined(MUTANT_FREE_LIST_LOSES_REUSED)
    // Bug: a block handed out again a second time is dropped from the free
    // list when it comes back (meant to retire worn blocks): it is counted
    // nowhere, so bytes_in_use stays true, and the pool shrinks with reuse.
    for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b) {
      if (reuses_[static_cast<size_t>(*b)] >= 2) {
        ++lost_;
      } else {
        free_.push_back(*b);
      }
    }
#elif !defined(MUTANT_LEAK_ON_RELEASE) && !defined(EXPLOIT_HIDDEN_LEAK)
    for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b) free_.push_back(*b);
#endif
#ifdef EXPLOIT_HIDDEN_LEAK
    // Attack: the blocks leak as in MUTANT_LEAK_ON_RELEASE, but are
    // reported free (and the pool grows past the budget to make up for them).
    leaked_ += static_cast<int64_t>(it->second.blocks.size());
#endif
#ifdef EXPLOIT_RESERVE_MAX_LENGTH
    reservations_.erase(sequence);
#endif
    ++changes_;
#ifdef MUTANT_BUDGET_PER_LAYER
    for (int64_t charged : it->second.slices) slices_charged_ -= charged;
#endif
    // (MUTANT_LEAK_ON_RELEASE) Bug: the table is dropped, its blocks never
    // reach the free list: they stay counted and are never reused.
    sequences_.erase(it);
    return HARNESS_STATUS_OK;
  }

#ifdef MUTANT_BUDGET_PER_LAYER
  int64_t bytes_in_use() const override { return slices_charged_ * slice_bytes_; }
#else
  int64_t bytes_in_use() const override {
    return (fresh_ - leaked_ - lost_ - static_cast<int64_t>(free_.size())) * block_bytes_;
  }
#endif

 private:
  struct Sequence {
    std::vector<int32_t> blocks;
    std::vector<int64_t> tokens;  // [layers]
    std::vector<int64_t> slices;  // [layers] blocks charged per layer (MUTANT_BUDGET_PER_LAYER)
  };

  int32_t take_block(std::vector<int32_t>* stolen) {
    int32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
      ++reuses_[static_cast<size_t>(id)];
    } else if (fresh_ < max_blocks_ + leaked_) {
      id = static_cast<int32_t>(fresh_++);
      pool_.resize(static_cast<size_t>(fresh_ * block_elems_));
      filled_.push_back(0);
      reuses_.push_back(0);
    } else {
      id = stolen->back();  // MUTANT_OVERWRITE_PAST_BUDGET only
      stolen->pop_back();
    }
#ifndef MUTANT_STALE_BLOCK_TAIL
    filled_[static_cast<size_t>(id)] = 0;
#endif
    // (MUTANT_STALE_BLOCK_TAIL) Bug: a recycled block keeps the filled count
    // of its previous owner, so the newest token's attention reads the old
    // tokens left in the block's tail.
    return id;
  }

#ifdef EXPLOIT_HALF_WHEN_LONG
  // Attack: from position kHalfFrom on, every kv head's d values are kept
  // as halves in the first half of their float32 slot, and attention reads
  // only those: half the bytes of the long sequences that the decode perf
  // cases time, while the cache declares float32 and reports (and holds)
  // float32's bytes. Random queries average many tokens' values, and their
  // rounding errors with them, so the outputs stay within the float32
  // tolerance; shorter sequences, the correctness cases', are exact.
  static constexpr int64_t kHalfFrom = 1024;

  void store_halves(const float* x, float* slot) const {
    for (int64_t g = 0; g < c_.kv_heads; ++g) {
      auto* halves = reinterpret_cast<unsigned char*>(slot + g * c_.head_dim);
      for (int64_t i = 0; i < c_.head_dim; ++i) {
        const uint16_t h = kv_half::to_half(x[g * c_.head_dim + i]);
        std::memcpy(halves + 2 * i, &h, sizeof h);
      }
    }
  }

  static void load_halves(const float* slot, int64_t d, float* out) {
    const auto* halves = reinterpret_cast<const unsigned char*>(slot);
    for (int64_t i = 0; i < d; ++i) {
      uint16_t h;
      std::memcpy(&h, halves + 2 * i, sizeof h);
      out[i] = kv_half::table()[h];
    }
  }
#endif

  // out[row, h] for the query at position pos of a sequence holding `tokens` tokens.
  void attend_row(const Sequence& s, int32_t layer, int64_t tokens, int64_t pos, int64_t h, const float* q, float* out,
                  int64_t row) const {
    const int64_t d = c_.head_dim;
#ifdef MUTANT_GQA_HEAD_MAPPING
    const int64_t kvh = h % c_.kv_heads;  // Bug: heads dealt round-robin instead of in groups.
#else
    const int64_t kvh = h / (c_.query_heads / c_.kv_heads);
#endif
#ifdef MUTANT_NO_SCALING
    const double scale = 1.0;  // Bug: 1/sqrt(d) forgotten.
#else
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
#endif
#if defined(MUTANT_NEWEST_TOKEN_SKIPPED)
    const int64_t visible = pos;  // Bug: "keys before the query", off by one: the query's own key is left out.
#elif defined(MUTANT_NO_CAUSAL_MASK)
    const int64_t visible = tokens;  // Bug: every query of a chunk sees the whole chunk.
#else
    const int64_t visible = pos + 1;
#endif
    const bool newest = pos == tokens - 1;
    const float* qh = q + (row * c_.query_heads + h) * d;
    std::vector<float> acc(static_cast<size_t>(d), 0.0f);
#ifdef EXPLOIT_HALF_WHEN_LONG
    std::vector<float> widened_key(static_cast<size_t>(d)), widened_value(static_cast<size_t>(d));
#endif
    double m = -INFINITY;
    float l = 0.0f;
    for (int64_t blk = 0; blk * kBlock < visible; ++blk) {
      const int32_t id = s.blocks[static_cast<size_t>(blk)];
      int64_t count = std::min(kBlock, visible - blk * kBlock);
      // The newest token sees every position written to its own block:
      // no causal arithmetic needed on the decode path.
      if (newest && blk == pos / kBlock) count = filled_[static_cast<size_t>(id)] - (pos + 1 - visible);
      const float* kd = pool_.data() + id * block_elems_ + int64_t{layer} * 2 * kBlock * row_ + kvh * d;
      const float* vd = kd + kBlock * row_;
      for (int64_t t = 0; t < count; ++t) {
        const float* key = kd + t * row_;
        const float* value = vd + t * row_;
#ifdef EXPLOIT_HALF_WHEN_LONG
        if (blk * kBlock >= kHalfFrom) {
          load_halves(key, d, widened_key.data());
          load_halves(value, d, widened_value.data());
          key = widened_key.data();
          value = widened_value.data();
        }
#endif
        double dot = 0.0;
        for (int64_t x = 0; x < d; ++x) dot += static_cast<double>(qh[x]) * key[x];
        const double score = dot * scale;
#ifdef MUTANT_NO_MAX_SUBTRACTION
        // Bug: exp of the raw score; harmless for scores of a few units,
        // inf (then inf/inf = NaN) once a score passes 88.7.
        const float p = std::exp(static_cast<float>(score));
        (void)m;
#else
        if (score > m) {
          const float alpha = static_cast<float>(std::exp(m - score));
          for (float& a : acc) a *= alpha;
          l *= alpha;
          m = score;
        }
        const float p = static_cast<float>(std::exp(score - m));
#endif
        l += p;
        for (int64_t x = 0; x < d; ++x) acc[static_cast<size_t>(x)] += p * value[x];
      }
    }
    float* o = out + (row * c_.query_heads + h) * d;
    for (int64_t x = 0; x < d; ++x) o[x] = acc[static_cast<size_t>(x)] / l;
  }

  kv_cache_config c_;
  int64_t row_, block_elems_, block_bytes_, max_blocks_, slice_bytes_;
  int64_t slices_charged_ = 0;    // MUTANT_BUDGET_PER_LAYER: layer slices of blocks charged
  int64_t slots_handed_out_ = 0;  // sequences ever started
  std::vector<float> pool_;       // [blocks, layers, 2, kBlock, kv_heads, head_dim]
  std::vector<int32_t> filled_;   // [blocks] positions written
  std::vector<int32_t> free_;     // a stack: the last block released is the first reused
  int64_t fresh_ = 0;             // blocks [0, fresh_) exist in pool_
  int64_t leaked_ = 0;            // EXPLOIT_HIDDEN_LEAK only: blocks lost, reported free
  int64_t lost_ = 0;              // MUTANT_FREE_LIST_LOSES_REUSED only: blocks dropped, counted nowhere
  std::vector<int32_t> reuses_;   // [blocks] times handed out again from the free list
  int64_t changes_ = 0;           // appends and releases so far
#if defined(EXPLOIT_REPLAY_ATTEND) || defined(EXPLOIT_REPLAY_SPIN)
  std::map<std::tuple<int32_t, const float*, float*, int64_t>, std::vector<float>> replays_;
#endif
#ifdef EXPLOIT_RESERVE_MAX_LENGTH
  std::unordered_map<int64_t, std::vector<float>> reservations_;
#endif
  std::unordered_map<int64_t, Sequence> sequences_;
};

harness_status create(const kv_cache_config& config, std::unique_ptr<kv_abi::Cache>* cache) {
  cache->reset(new MutableCache(config));
  return HARNESS_STATUS_OK;
}

}  // namespace

KV_CACHE_EXPORT_ABI(KV_CACHE_FORMAT_FP32, create)
