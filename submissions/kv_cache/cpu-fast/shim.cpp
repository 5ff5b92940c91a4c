// ABI shim of the project's paged CPU cache (kernels/kv_cache/cpu).
#include <memory>
#include <string>

#include "abi_support.h"
#include "kv_cache/cpu/paged_cache_cpu.h"

namespace {

using kvcache::BlockTable;
using kvcache::cpu::PagedCache;

harness_status to_status(BlockTable::Status status, const std::string& why) {
  switch (status) {
    case BlockTable::Status::ok: return HARNESS_STATUS_OK;
    case BlockTable::Status::out_of_memory: return kv_abi::fail(HARNESS_STATUS_OUT_OF_MEMORY, why);
    case BlockTable::Status::invalid: break;
  }
  return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, why);
}

class Cache final : public kv_abi::Cache {
 public:
  explicit Cache(const kvcache::cpu::CacheConfig& config) : cache_(config) {}

  harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                        void* /*stream*/) override {
    std::string why;
    return to_status(cache_.append(layer, sequence, n, k, v, &why), why);
  }

  harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, void* /*stream*/) override {
    std::string why;
    if (!cache_.attend(layer, batch, sequences, query_lengths, q, out, &why))
      return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, why);
    return HARNESS_STATUS_OK;
  }

  harness_status release(int64_t sequence) override {
    if (!cache_.release(sequence))
      return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT,
                          "release: sequence " + std::to_string(sequence) + " is not live");
    return HARNESS_STATUS_OK;
  }

  int64_t bytes_in_use() const override { return cache_.bytes_in_use(); }

 private:
  PagedCache cache_;
};

harness_status create(const kv_cache_config& c, std::unique_ptr<kv_abi::Cache>* cache) {
  const kvcache::cpu::CacheConfig config{c.layers,        c.query_heads, c.kv_heads,     c.head_dim,
                                         c.max_sequences, c.max_tokens,  c.memory_budget};
  cache->reset(new Cache(config));
  return HARNESS_STATUS_OK;
}

}  // namespace

KV_CACHE_EXPORT_ABI(KV_CACHE_FORMAT_FP32, create)
