// ABI shim of the project's paged CUDA cache (kernels/kv_cache/cuda), fp32;
// cuda-fast-fp16 builds this file with KV_CACHE_SHIM_FP16 for fp16 storage.
#include <memory>
#include <string>

#include "abi_support.h"
#include "kv_cache/cuda/paged_cache_cuda.cuh"

namespace {

namespace kc = kvcache::cuda;

#ifdef KV_CACHE_SHIM_FP16
constexpr kc::Format kFormat = kc::Format::fp16;
constexpr int32_t kAbiFormat = KV_CACHE_FORMAT_FP16;
#else
constexpr kc::Format kFormat = kc::Format::fp32;
constexpr int32_t kAbiFormat = KV_CACHE_FORMAT_FP32;
#endif

harness_status to_status(kc::Status status, const std::string& why) {
  switch (status) {
    case kc::Status::ok: return HARNESS_STATUS_OK;
    case kc::Status::out_of_memory: return kv_abi::fail(HARNESS_STATUS_OUT_OF_MEMORY, why);
    case kc::Status::invalid: return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, why);
    case kc::Status::unsupported: return kv_abi::fail(HARNESS_STATUS_UNSUPPORTED, why);
    case kc::Status::cuda_error: break;
  }
  return kv_abi::fail(HARNESS_STATUS_ERROR, why);
}

class Cache final : public kv_abi::Cache {
 public:
  explicit Cache(std::unique_ptr<kc::PagedCache> cache) : cache_(std::move(cache)) {}

  harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                        void* stream) override {
    std::string why;
    return to_status(cache_->append(layer, sequence, n, k, v, static_cast<cudaStream_t>(stream), &why), why);
  }

  harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, void* stream) override {
    std::string why;
    return to_status(
        cache_->attend(layer, batch, sequences, query_lengths, q, out, static_cast<cudaStream_t>(stream), &why), why);
  }

  harness_status release(int64_t sequence) override {
    if (!cache_->release(sequence))
      return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT,
                          "release: sequence " + std::to_string(sequence) + " is not live");
    return HARNESS_STATUS_OK;
  }

  int64_t bytes_in_use() const override { return cache_->bytes_in_use(); }

 private:
  std::unique_ptr<kc::PagedCache> cache_;
};

harness_status create(const kv_cache_config& c, std::unique_ptr<kv_abi::Cache>* cache) {
  const kc::CacheConfig config{c.layers,        c.query_heads, c.kv_heads,     c.head_dim,
                               c.max_sequences, c.max_tokens,  c.memory_budget};
  std::unique_ptr<kc::PagedCache> made;
  std::string why;
  const kc::Status status = kc::PagedCache::create(config, kFormat, &made, &why);
  if (status != kc::Status::ok) return to_status(status, why);
  cache->reset(new Cache(std::move(made)));
  return HARNESS_STATUS_OK;
}

}  // namespace

KV_CACHE_EXPORT_ABI(kAbiFormat, create)
