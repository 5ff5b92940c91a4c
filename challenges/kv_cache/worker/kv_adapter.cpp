// The worker's bridge to a kv_cache submission's C ABI (kv_cache.h). The
// adapter holds the one cache of the current workload between calls.
#include <memory>
#include <vector>

#include "harness/worker/abi_adapter.h"
#include "kv_cache.h"

namespace kv {

namespace {

class KvCacheAdapter : public harness::AbiAdapter {
 public:
  ~KvCacheAdapter() override {
    // The worker process is about to end; a cache the workload did not
    // destroy (it ended early) goes with it.
  }

  void bind(const harness::SymbolTable& symbols) override {
    version_ = symbols.require<decltype(&kv_cache_abi_version)>("kv_cache_abi_version");
    format_ = symbols.require<decltype(&kv_cache_format)>("kv_cache_format");
    create_ = symbols.require<decltype(&kv_cache_create)>("kv_cache_create");
    destroy_ = symbols.require<decltype(&kv_cache_destroy)>("kv_cache_destroy");
    append_ = symbols.require<decltype(&kv_cache_append)>("kv_cache_append");
    attend_ = symbols.require<decltype(&kv_cache_attend)>("kv_cache_attend");
    release_ = symbols.require<decltype(&kv_cache_release)>("kv_cache_release");
    bytes_ = symbols.require<decltype(&kv_cache_bytes_in_use)>("kv_cache_bytes_in_use");
    last_error_ = symbols.require<decltype(&kv_cache_last_error)>("kv_cache_last_error");
  }

  int32_t abi_version() const override { return version_(); }
  int32_t expected_abi_version() const override { return KV_CACHE_ABI_VERSION; }

  harness::BoundCall prepare(const std::string& op, const harness::OpArguments& a) override {
    harness::BoundCall call;
    if (op == "format") {
      auto format = std::make_shared<int32_t>(-1);
      auto query = format_;
      call.invoke = [=] {
        *format = query();
        return HARNESS_STATUS_OK;
      };
      call.results = [format] { return nlohmann::json{{"format", *format}}; };
      return call;
    }
    if (op == "create") {
      kv_cache_config config{};
      config.layers = static_cast<int32_t>(a.scalar_int("layers"));
      config.query_heads = static_cast<int32_t>(a.scalar_int("query_heads"));
      config.kv_heads = static_cast<int32_t>(a.scalar_int("kv_heads"));
      config.head_dim = static_cast<int32_t>(a.scalar_int("head_dim"));
      config.max_sequences = static_cast<int32_t>(a.scalar_int("max_sequences"));
      config.max_tokens = a.scalar_int("max_tokens");
      config.memory_budget = a.scalar_int("memory_budget");
      call.invoke = [this, config] {
        if (cache_) {  // a workload that ended early left its cache behind
          destroy_(cache_);
          cache_ = nullptr;
        }
        return create_(&config, &cache_);
      };
      return call;
    }
    if (op == "bytes_in_use") {
      auto bytes = std::make_shared<int64_t>(-1);
      call.invoke = [this, bytes] { return bytes_(cache_, bytes.get()); };
      call.results = [bytes] { return nlohmann::json{{"bytes", *bytes}}; };
      return call;
    }
    if (op == "destroy") {
      call.invoke = [this] {
        const harness_status status = destroy_(cache_);
        cache_ = nullptr;
        return status;
      };
      return call;
    }
    if (op == "release") {
      const int64_t sequence = a.scalar_int("sequence");
      call.invoke = [this, sequence] { return release_(cache_, sequence); };
      return call;
    }
    void* stream = a.stream;
    if (op == "append") {
      const auto layer = static_cast<int32_t>(a.scalar_int("layer"));
      const int64_t sequence = a.scalar_int("sequence");
      const int64_t n = a.scalar_int("n");
      const auto* k = static_cast<const float*>(a.tensor("k"));
      const auto* v = static_cast<const float*>(a.tensor("v"));
      call.invoke = [=] { return append_(cache_, layer, sequence, n, k, v, stream); };
      return call;
    }
    if (op == "attend") {
      const auto layer = static_cast<int32_t>(a.scalar_int("layer"));
      // Host arrays that live as long as the bound call.
      auto sequences = std::make_shared<std::vector<int64_t>>((*a.scalars)["sequences"].get<std::vector<int64_t>>());
      auto lengths = std::make_shared<std::vector<int32_t>>((*a.scalars)["query_lengths"].get<std::vector<int32_t>>());
      const auto* q = static_cast<const float*>(a.tensor("q"));
      auto* out = static_cast<float*>(a.tensor("out"));
      call.invoke = [=] {
        return attend_(cache_, layer, static_cast<int32_t>(sequences->size()), sequences->data(), lengths->data(), q,
                       out, stream);
      };
      return call;
    }
    throw harness::HarnessError("kv_cache has no op '" + op + "'");
  }

  std::string last_error() const override {
    const char* message = last_error_();
    return message ? message : "(kv_cache_last_error returned NULL)";
  }

 private:
  kv_cache* cache_ = nullptr;
  decltype(&kv_cache_abi_version) version_ = nullptr;
  decltype(&kv_cache_format) format_ = nullptr;
  decltype(&kv_cache_create) create_ = nullptr;
  decltype(&kv_cache_destroy) destroy_ = nullptr;
  decltype(&kv_cache_append) append_ = nullptr;
  decltype(&kv_cache_attend) attend_ = nullptr;
  decltype(&kv_cache_release) release_ = nullptr;
  decltype(&kv_cache_bytes_in_use) bytes_ = nullptr;
  decltype(&kv_cache_last_error) last_error_ = nullptr;
};

}  // namespace

HARNESS_REGISTER_ABI_ADAPTER("kv_cache", KvCacheAdapter);

}  // namespace kv
