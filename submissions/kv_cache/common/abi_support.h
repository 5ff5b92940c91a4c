// ABI plumbing shared by the kv_cache submissions of this repository.
//
// Not a submission (no submission.json here). A submission implements
// kv_abi::Cache (one object per kv_cache_create) and a factory, then
// KV_CACHE_EXPORT_ABI(format, factory) defines the nine exported functions:
// arguments that the challenge's contract rules out are refused here, the same
// way in every submission, and no exception crosses the C ABI
// (harness_abi.h). What only the cache knows (is a sequence live, does it hold
// n_b tokens in that layer) is the cache's to check.
#ifndef KV_CACHE_ABI_SUPPORT_H
#define KV_CACHE_ABI_SUPPORT_H

#include <cstdint>
#include <memory>
#include <string>

#include "../../common/abi_errors.h"
#include "kv_cache.h"

namespace kv_abi {

// The error plumbing every submission shares, under this challenge's name.
using submission_abi::fail;
using submission_abi::guarded;
using submission_abi::last_error;
using submission_abi::last_error_message;

// One cache, as kv_cache_create makes it. Methods may throw; the exported
// functions turn any exception into HARNESS_STATUS_ERROR.
class Cache {
 public:
  virtual ~Cache() = default;
  // k, v [n, kv_heads, head_dim]; layer and n already checked against the config.
  virtual harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                                void* stream) = 0;
  // q, out [sum n_b, query_heads, head_dim]; every n_b >= 1 already checked.
  virtual harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                                const float* q, float* out, void* stream) = 0;
  virtual harness_status release(int64_t sequence) = 0;
  virtual int64_t bytes_in_use() const = 0;
};

using Factory = harness_status (*)(const kv_cache_config& config, std::unique_ptr<Cache>* cache);

inline harness_status check_config(const kv_cache_config* c) noexcept {
  if (c == nullptr) return fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_create: config is NULL");
  if (c->layers < 1 || c->query_heads < 1 || c->kv_heads < 1 || c->head_dim < 1)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_create: layers, heads and head_dim must be >= 1");
  if (c->query_heads % c->kv_heads != 0)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_create: query_heads must be a multiple of kv_heads");
  if (c->max_sequences < 1 || c->max_tokens < 1 || c->memory_budget < 0)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT,
                "kv_cache_create: need max_sequences >= 1, max_tokens >= 1, memory_budget >= 0");
  // Keeps every element index of a sequence's K/V below 2^62.
  if (c->max_tokens > (int64_t{1} << 40) || int64_t{c->kv_heads} * c->head_dim > (int64_t{1} << 20))
    return fail(HARNESS_STATUS_UNSUPPORTED, "kv_cache_create: max_tokens or kv_heads * head_dim too large");
  return HARNESS_STATUS_OK;
}

// What our CUDA kernels can launch: one grid row per query head (a grid's y
// size stops at 65535) and key positions held in int32.
inline harness_status check_cuda_kernel_limits(const kv_cache_config& c) {
  if (c.query_heads > 65535)
    return fail(HARNESS_STATUS_UNSUPPORTED, "kv_cache_create: query_heads " + std::to_string(c.query_heads) +
                                                " is above 65535, the most grid rows a launch may have");
  if (c.max_tokens > INT32_MAX)
    return fail(HARNESS_STATUS_UNSUPPORTED, "kv_cache_create: max_tokens " + std::to_string(c.max_tokens) +
                                                " is above 2^31 - 1; positions are int32 in the kernels");
  return HARNESS_STATUS_OK;
}

// An append that would start a new sequence: only at layer 0 (every layer
// receives the same tokens, layer 0 first), and only below max_sequences.
inline harness_status check_new_sequence(int32_t layer, size_t live, const kv_cache_config& c) noexcept {
  if (layer != 0) return fail(HARNESS_STATUS_INVALID_ARGUMENT, "append: a sequence starts at layer 0");
  if (static_cast<int64_t>(live) >= c.max_sequences)
    return fail(HARNESS_STATUS_OUT_OF_MEMORY, "append: max_sequences are live");
  return HARNESS_STATUS_OK;
}

// A new sequence for a cache that reserves a whole slot of `slot_bytes` per
// sequence up front: admitted as above, and only while the budget pays for
// one more slot.
inline harness_status check_new_slot(int32_t layer, size_t live, int64_t slot_bytes,
                                     const kv_cache_config& c) noexcept {
  const harness_status admitted = check_new_sequence(layer, live, c);
  if (admitted != HARNESS_STATUS_OK) return admitted;
  if ((static_cast<int64_t>(live) + 1) * slot_bytes > c.memory_budget)
    return fail(HARNESS_STATUS_OUT_OF_MEMORY, "append: one more slot of max_tokens positions would pass the budget");
  return HARNESS_STATUS_OK;
}

}  // namespace kv_abi

// The opaque handle of kv_cache.h: the config as created, and the cache.
struct kv_cache {
  kv_cache_config config;
  std::unique_ptr<kv_abi::Cache> impl;
};

// Defines the exported functions of kv_cache.h for a cache of KV_CACHE_FORMAT
// `format` made by `factory` (a kv_abi::Factory).
#define KV_CACHE_EXPORT_ABI(format, factory)                                                                          \
  extern "C" int32_t kv_cache_abi_version(void) { return KV_CACHE_ABI_VERSION; }                                      \
  extern "C" int32_t kv_cache_format(void) { return (format); }                                                       \
  extern "C" const char* kv_cache_last_error(void) { return kv_abi::last_error_message().c_str(); }                   \
  extern "C" harness_status kv_cache_create(const kv_cache_config* config, kv_cache** cache) {                        \
    return kv_abi::guarded([&] {                                                                                      \
      if (cache == nullptr) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_create: cache is NULL");   \
      *cache = nullptr;                                                                                               \
      harness_status status = kv_abi::check_config(config);                                                           \
      if (status != HARNESS_STATUS_OK) return status;                                                                 \
      std::unique_ptr<kv_cache> made(new kv_cache{*config, nullptr});                                                 \
      status = (factory)(*config, &made->impl);                                                                       \
      if (status != HARNESS_STATUS_OK) return status;                                                                 \
      *cache = made.release();                                                                                        \
      return static_cast<harness_status>(HARNESS_STATUS_OK);                                                          \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" harness_status kv_cache_destroy(kv_cache* cache) {                                                       \
    return kv_abi::guarded([&] {                                                                                      \
      delete cache;                                                                                                   \
      return static_cast<harness_status>(HARNESS_STATUS_OK);                                                          \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" harness_status kv_cache_append(kv_cache* cache, int32_t layer, int64_t sequence, int64_t n,              \
                                            const float* k, const float* v, void* stream) {                           \
    return kv_abi::guarded([&] {                                                                                      \
      if (cache == nullptr || k == nullptr || v == nullptr)                                                           \
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_append: a pointer is NULL");                   \
      if (layer < 0 || layer >= cache->config.layers)                                                                 \
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_append: layer out of range");                  \
      if (n < 1 || n > cache->config.max_tokens)                                                                      \
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_append: need 1 <= n <= max_tokens");           \
      return cache->impl->append(layer, sequence, n, k, v, stream);                                                   \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" harness_status kv_cache_attend(kv_cache* cache, int32_t layer, int32_t batch, const int64_t* sequences,  \
                                            const int32_t* query_lengths, const float* q, float* out, void* stream) { \
    return kv_abi::guarded([&] {                                                                                      \
      if (cache == nullptr || sequences == nullptr || query_lengths == nullptr || q == nullptr || out == nullptr)     \
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_attend: a pointer is NULL");                   \
      if (layer < 0 || layer >= cache->config.layers)                                                                 \
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_attend: layer out of range");                  \
      if (batch < 1) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_attend: batch < 1");              \
      for (int32_t b = 0; b < batch; ++b)                                                                             \
        if (query_lengths[b] < 1)                                                                                     \
          return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_attend: a query length is < 1");             \
      return cache->impl->attend(layer, batch, sequences, query_lengths, q, out, stream);                             \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" harness_status kv_cache_release(kv_cache* cache, int64_t sequence) {                                     \
    return kv_abi::guarded([&] {                                                                                      \
      if (cache == nullptr) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_release: NULL");           \
      return cache->impl->release(sequence);                                                                          \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" harness_status kv_cache_bytes_in_use(kv_cache* cache, int64_t* bytes) {                                  \
    return kv_abi::guarded([&] {                                                                                      \
      if (cache == nullptr || bytes == nullptr)                                                                       \
        return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "kv_cache_bytes_in_use: a pointer is NULL");             \
      *bytes = cache->impl->bytes_in_use();                                                                           \
      return static_cast<harness_status>(HARNESS_STATUS_OK);                                                          \
    });                                                                                                               \
  }

#endif  // KV_CACHE_ABI_SUPPORT_H
