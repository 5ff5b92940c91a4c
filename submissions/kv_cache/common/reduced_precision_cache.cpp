// CPU KV cache storing K and V in a reduced format: the reduced-precision
// paths of the challenge on the CPU, so that a machine without a GPU (CI)
// judges them too. Built as `cpu-fp16` (IEEE binary16) and, with
// KV_STORE_INT8, as `cpu-int8`.
//
// Memory: paged. A block holds 16 positions of every layer's K and V,
// [layers, 2, 16, kv_heads, stored head] bytes; blocks are taken at layer 0's
// append (a chunk that would pass the budget is refused whole there) and go
// to a free list on release, whence the next append reuses them.
// bytes_in_use = blocks owned by live sequences * block bytes.
//
// Storage of one kv head's head_dim values at one position:
//   fp16: halves, rounded to nearest even (off by at most 2^-11 relative);
//   int8: a float32 scale max|x| / 127, then codes round(x / scale) (off by
//         at most half a step, max|x| / 254).
//
// Attention: for every query row and kv head, one pass over the visible
// positions with an online softmax in float (running max subtracted); each
// position's K and V are widened to float once and serve every query head
// of the GQA group.
//
// Mutants built from this file (submissions/kv_cache/mutants/):
//   MUTANT_FP16_HALF_EXP: the exponentials are rounded to half and taken
//     without subtracting the running max, as a kernel doing its softmax in
//     half arithmetic might: exp overflows half's 65504 for scores above 11.1.
//   MUTANT_FP16_NO_SCALING: scores are not divided by sqrt(head_dim).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "abi_support.h"
#include "half.h"

namespace {

constexpr int64_t kBlockTokens = 16;

// One kv head's d values at one position, stored in `bytes(d)` bytes.
struct HalfStorage {
  static constexpr int32_t kFormat = KV_CACHE_FORMAT_FP16;
  static int64_t bytes(int64_t d) { return 2 * d; }
  static void store(const float* x, int64_t d, uint8_t* out) {
    for (int64_t i = 0; i < d; ++i) {
      const uint16_t h = kv_half::to_half(x[i]);
      std::memcpy(out + 2 * i, &h, sizeof h);
    }
  }
  static void load(const uint8_t* in, int64_t d, float* out) {
    const std::vector<float>& table = kv_half::table();
    for (int64_t i = 0; i < d; ++i) {
      uint16_t h;
      std::memcpy(&h, in + 2 * i, sizeof h);
      out[i] = table[h];
    }
  }
};

struct Int8Storage {
  static constexpr int32_t kFormat = KV_CACHE_FORMAT_INT8;
  static int64_t bytes(int64_t d) { return sizeof(float) + d; }
  static void store(const float* x, int64_t d, uint8_t* out) {
    float largest = 0;
    for (int64_t i = 0; i < d; ++i) largest = std::max(largest, std::fabs(x[i]));
    const float scale = largest > 0 ? largest / 127.0f : 1.0f;
    std::memcpy(out, &scale, sizeof scale);
    for (int64_t i = 0; i < d; ++i) {
      const auto code = static_cast<int8_t>(std::clamp(std::nearbyint(x[i] / scale), -127.0f, 127.0f));
      std::memcpy(out + sizeof scale + i, &code, 1);
    }
  }
  static void load(const uint8_t* in, int64_t d, float* out) {
    float scale;
    std::memcpy(&scale, in, sizeof scale);
    for (int64_t i = 0; i < d; ++i) out[i] = static_cast<float>(static_cast<int8_t>(in[sizeof scale + i])) * scale;
  }
};

#ifdef KV_STORE_INT8
using Storage = Int8Storage;
#else
using Storage = HalfStorage;
#endif

class ReducedPrecisionCache final : public kv_abi::Cache {
 public:
  explicit ReducedPrecisionCache(const kv_cache_config& c)
      : c_(c),
        head_bytes_(Storage::bytes(c.head_dim)),
        row_bytes_(int64_t{c.kv_heads} * head_bytes_),
        block_bytes_(int64_t{c.layers} * 2 * kBlockTokens * row_bytes_) {}

  harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v, void*) override {
    auto it = sequences_.find(sequence);
    if (it == sequences_.end()) {
      const harness_status admitted = kv_abi::check_new_sequence(layer, sequences_.size(), c_);
      if (admitted != HARNESS_STATUS_OK) return admitted;
      Sequence fresh;
      fresh.tokens.assign(static_cast<size_t>(c_.layers), 0);
      it = sequences_.emplace(sequence, std::move(fresh)).first;
    }
    Sequence& s = it->second;
    int64_t& held = s.tokens[static_cast<size_t>(layer)];
    if (held + n > c_.max_tokens)
      return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "append: the sequence would pass max_tokens");
    const int64_t blocks_needed = (held + n + kBlockTokens - 1) / kBlockTokens;
    const auto owned = static_cast<int64_t>(s.blocks.size());
    if (blocks_needed > owned) {
      if (layer != 0) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "append: layer 0 receives a chunk first");
      if ((blocks_owned_ + blocks_needed - owned) * block_bytes() > c_.memory_budget) {
        if (held == 0) sequences_.erase(it);
        return kv_abi::fail(HARNESS_STATUS_OUT_OF_MEMORY, "append: the chunk would pass the memory budget");
      }
      while (static_cast<int64_t>(s.blocks.size()) < blocks_needed) s.blocks.push_back(take_block());
      blocks_owned_ += blocks_needed - owned;
    }
    const int64_t d = c_.head_dim, row = int64_t{c_.kv_heads} * d;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t position = held + t;
      uint8_t* kd = slot(s, layer, 0, position);
      uint8_t* vd = slot(s, layer, 1, position);
      for (int64_t g = 0; g < c_.kv_heads; ++g) {
        Storage::store(k + t * row + g * d, d, kd + g * head_bytes_);
        Storage::store(v + t * row + g * d, d, vd + g * head_bytes_);
      }
    }
    held += n;
    return HARNESS_STATUS_OK;
  }

  harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, void*) override {
    const int64_t hq = c_.query_heads, d = c_.head_dim, group = hq / c_.kv_heads;
#ifdef MUTANT_FP16_NO_SCALING
    const float scale = 1.0f;
#else
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
#endif
    std::vector<float> key(static_cast<size_t>(d)), value(static_cast<size_t>(d));
    std::vector<float> acc(static_cast<size_t>(group * d)), max(static_cast<size_t>(group)),
        sum(static_cast<size_t>(group));
    int64_t row = 0;
    for (int32_t b = 0; b < batch; ++b) {
      const auto it = sequences_.find(sequences[b]);
      if (it == sequences_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: sequence not live");
      const Sequence& s = it->second;
      const int64_t tokens = s.tokens[static_cast<size_t>(layer)];
      if (query_lengths[b] > tokens)
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: more queries than tokens");
      for (int64_t i = 0; i < query_lengths[b]; ++i, ++row) {
        const int64_t visible = tokens - query_lengths[b] + i + 1;
        for (int64_t g = 0; g < c_.kv_heads; ++g) {
          std::fill(acc.begin(), acc.end(), 0.0f);
          std::fill(max.begin(), max.end(), -INFINITY);
          std::fill(sum.begin(), sum.end(), 0.0f);
          for (int64_t t = 0; t < visible; ++t) {
            Storage::load(slot(s, layer, 0, t) + g * head_bytes_, d, key.data());
            Storage::load(slot(s, layer, 1, t) + g * head_bytes_, d, value.data());
            for (int64_t m = 0; m < group; ++m) {
              const float* qh = q + (row * hq + g * group + m) * d;
              float dot = 0;
              for (int64_t x = 0; x < d; ++x) dot += qh[x] * key[static_cast<size_t>(x)];
              const float score = dot * scale;
              float* a = acc.data() + m * d;
#ifdef MUTANT_FP16_HALF_EXP
              const float weight = kv_half::table()[kv_half::to_half(std::exp(score))];
#else
              float weight = 1.0f;
              if (score > max[static_cast<size_t>(m)]) {
                const float rescale = std::exp(max[static_cast<size_t>(m)] - score);
                sum[static_cast<size_t>(m)] *= rescale;
                for (int64_t x = 0; x < d; ++x) a[x] *= rescale;
                max[static_cast<size_t>(m)] = score;
              } else {
                weight = std::exp(score - max[static_cast<size_t>(m)]);
              }
#endif
              sum[static_cast<size_t>(m)] += weight;
              for (int64_t x = 0; x < d; ++x) a[x] += weight * value[static_cast<size_t>(x)];
            }
          }
          for (int64_t m = 0; m < group; ++m) {
            float* o = out + (row * hq + g * group + m) * d;
            for (int64_t x = 0; x < d; ++x) o[x] = acc[static_cast<size_t>(m * d + x)] / sum[static_cast<size_t>(m)];
          }
        }
      }
    }
    return HARNESS_STATUS_OK;
  }

  harness_status release(int64_t sequence) override {
    const auto it = sequences_.find(sequence);
    if (it == sequences_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "release: not live");
    blocks_owned_ -= static_cast<int64_t>(it->second.blocks.size());
    for (auto& block : it->second.blocks) free_.push_back(std::move(block));
    sequences_.erase(it);
    return HARNESS_STATUS_OK;
  }

  int64_t bytes_in_use() const override { return blocks_owned_ * block_bytes(); }

 private:
  struct Sequence {
    std::vector<std::unique_ptr<uint8_t[]>> blocks;
    std::vector<int64_t> tokens;  // [layers]
  };

  int64_t block_bytes() const { return block_bytes_; }

  std::unique_ptr<uint8_t[]> take_block() {
    if (free_.empty()) return std::unique_ptr<uint8_t[]>(new uint8_t[static_cast<size_t>(block_bytes_)]);
    auto block = std::move(free_.back());
    free_.pop_back();
    return block;
  }

  // Position `position` of one layer's K (which 0) or V (1), every kv head.
  uint8_t* slot(const Sequence& s, int64_t layer, int64_t which, int64_t position) const {
    uint8_t* block = s.blocks[static_cast<size_t>(position / kBlockTokens)].get();
    return block + ((layer * 2 + which) * kBlockTokens + position % kBlockTokens) * row_bytes_;
  }

  kv_cache_config c_;
  int64_t head_bytes_;   // one kv head's head_dim values, stored
  int64_t row_bytes_;    // kv_heads of them: one position of one layer's K (or V)
  int64_t block_bytes_;  // layers * 2 * kBlockTokens rows
  int64_t blocks_owned_ = 0;
  std::vector<std::unique_ptr<uint8_t[]>> free_;
  std::unordered_map<int64_t, Sequence> sequences_;
};

harness_status create(const kv_cache_config& config, std::unique_ptr<kv_abi::Cache>* cache) {
  cache->reset(new ReducedPrecisionCache(config));
  return HARNESS_STATUS_OK;
}

}  // namespace

KV_CACHE_EXPORT_ABI(Storage::kFormat, create)
