// Naive CPU KV cache: the baseline the paged caches are measured against.
//
// Memory: each live sequence owns a slot reserved at its first append for
// max_tokens positions of every layer, whatever it will really hold:
//   slot [layers, 2 (K, V), max_tokens, kv_heads, head_dim] float32
// A new sequence is refused (OUT_OF_MEMORY) when one more slot would pass the
// budget; a release frees the slot. bytes_in_use = live slots * slot bytes.
//
// Attention: for every query row and query head, on one thread, the textbook
// three passes over the visible keys: scores, their max and the exp sum,
// then the weighted sum of V, in double (token by token, so that V is read in
// order). Every query head reads its kv head's K and V again (no GQA
// sharing).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "abi_support.h"

namespace {

class NaiveCache final : public kv_abi::Cache {
 public:
  explicit NaiveCache(const kv_cache_config& c)
      : c_(c), row_(int64_t{c.kv_heads} * c.head_dim), plane_(c.max_tokens * row_) {}

  int64_t slot_bytes() const { return int64_t{c_.layers} * 2 * plane_ * static_cast<int64_t>(sizeof(float)); }

  harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v, void*) override {
    auto it = slots_.find(sequence);
    if (it == slots_.end()) {
      const harness_status admitted = kv_abi::check_new_slot(layer, slots_.size(), slot_bytes(), c_);
      if (admitted != HARNESS_STATUS_OK) return admitted;
      Slot slot;
      slot.data.reset(new float[static_cast<size_t>(c_.layers * 2 * plane_)]);
      slot.tokens.assign(static_cast<size_t>(c_.layers), 0);
      it = slots_.emplace(sequence, std::move(slot)).first;
    }
    Slot& s = it->second;
    int64_t& held = s.tokens[static_cast<size_t>(layer)];
    if (held + n > c_.max_tokens)
      return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "append: the sequence would pass max_tokens");
    float* kd = s.data.get() + (int64_t{layer} * 2) * plane_ + held * row_;
    float* vd = kd + plane_;
    for (int64_t i = 0; i < n * row_; ++i) {
      kd[i] = k[i];
      vd[i] = v[i];
    }
    held += n;
    return HARNESS_STATUS_OK;
  }

  harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, void*) override {
    const int64_t hq = c_.query_heads, d = c_.head_dim, group = hq / c_.kv_heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    int64_t row = 0;
    std::vector<double> scores, acc(static_cast<size_t>(c_.head_dim));
    for (int32_t b = 0; b < batch; ++b) {
      const auto it = slots_.find(sequences[b]);
      if (it == slots_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: sequence not live");
      const int64_t tokens = it->second.tokens[static_cast<size_t>(layer)];
      if (query_lengths[b] > tokens)
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: more queries than tokens");
      const float* kd = it->second.data.get() + (int64_t{layer} * 2) * plane_;
      const float* vd = kd + plane_;
      for (int64_t i = 0; i < query_lengths[b]; ++i, ++row) {
        const int64_t visible = tokens - query_lengths[b] + i + 1;
        scores.resize(static_cast<size_t>(visible));
        for (int64_t h = 0; h < hq; ++h) {
          const float* qh = q + (row * hq + h) * d;
          const int64_t kvh = h / group;
          double max = -INFINITY;
          for (int64_t t = 0; t < visible; ++t) {
            double s = 0.0;
            for (int64_t x = 0; x < d; ++x) s += static_cast<double>(qh[x]) * kd[t * row_ + kvh * d + x];
            scores[static_cast<size_t>(t)] = s * scale;
            if (s * scale > max) max = s * scale;
          }
          double sum = 0.0;
          for (int64_t t = 0; t < visible; ++t) {
            scores[static_cast<size_t>(t)] = std::exp(scores[static_cast<size_t>(t)] - max);
            sum += scores[static_cast<size_t>(t)];
          }
          float* oh = out + (row * hq + h) * d;
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t t = 0; t < visible; ++t) {
            const float* vt = vd + t * row_ + kvh * d;
            for (int64_t x = 0; x < d; ++x) acc[static_cast<size_t>(x)] += scores[static_cast<size_t>(t)] * vt[x];
          }
          for (int64_t x = 0; x < d; ++x) oh[x] = static_cast<float>(acc[static_cast<size_t>(x)] / sum);
        }
      }
    }
    return HARNESS_STATUS_OK;
  }

  harness_status release(int64_t sequence) override {
    if (slots_.erase(sequence) == 0) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "release: not live");
    return HARNESS_STATUS_OK;
  }

  int64_t bytes_in_use() const override { return static_cast<int64_t>(slots_.size()) * slot_bytes(); }

 private:
  struct Slot {
    std::unique_ptr<float[]> data;  // [layers, 2, max_tokens, kv_heads, head_dim]
    std::vector<int64_t> tokens;    // [layers]
  };
  kv_cache_config c_;
  int64_t row_;    // kv_heads * head_dim: one position of one layer's K
  int64_t plane_;  // max_tokens * row_: one layer's K (or V)
  std::unordered_map<int64_t, Slot> slots_;
};

harness_status create(const kv_cache_config& config, std::unique_ptr<kv_abi::Cache>* cache) {
  cache->reset(new NaiveCache(config));
  return HARNESS_STATUS_OK;
}

}  // namespace

KV_CACHE_EXPORT_ABI(KV_CACHE_FORMAT_FP32, create)
