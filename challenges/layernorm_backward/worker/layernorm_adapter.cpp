// The worker's bridge to a layernorm_backward submission's C ABI
// (layernorm_backward.h).
#include "harness/worker/abi_adapter.h"
#include "layernorm_backward.h"

namespace layernorm {

namespace {

class LayerNormAdapter : public harness::AbiAdapter {
 public:
  void bind(const harness::SymbolTable& symbols) override {
    version_ = symbols.require<decltype(&layernorm_abi_version)>("layernorm_abi_version");
    saved_bytes_ = symbols.require<decltype(&layernorm_saved_state_bytes)>("layernorm_saved_state_bytes");
    forward_ = symbols.require<decltype(&layernorm_forward)>("layernorm_forward");
    backward_ = symbols.require<decltype(&layernorm_backward)>("layernorm_backward");
    last_error_ = symbols.require<decltype(&layernorm_last_error)>("layernorm_last_error");
  }

  int32_t abi_version() const override { return version_(); }
  int32_t expected_abi_version() const override { return LAYERNORM_ABI_VERSION; }

  harness::BoundCall prepare(const std::string& op, const harness::OpArguments& a) override {
    const int64_t rows = a.scalar_int("rows");
    const int64_t dim = a.scalar_int("dim");
    harness::BoundCall call;
    if (op == "saved_state_bytes") {
      auto bytes = std::make_shared<int64_t>(-1);
      auto query = saved_bytes_;
      call.invoke = [=] { return query(rows, dim, bytes.get()); };
      call.results = [bytes] { return nlohmann::json{{"bytes", *bytes}}; };
      return call;
    }
    const auto eps = static_cast<float>(a.scalar_double("eps"));
    void* stream = a.stream;
    if (op == "forward") {
      const auto* x = static_cast<const float*>(a.tensor("x"));
      const auto* gamma = static_cast<const float*>(a.tensor("gamma"));
      const auto* beta = static_cast<const float*>(a.tensor("beta"));
      auto* y = static_cast<float*>(a.tensor("y"));
      void* saved = a.tensor("saved");
      auto run = forward_;
      call.invoke = [=] { return run(x, gamma, beta, rows, dim, eps, y, saved, stream); };
      return call;
    }
    if (op == "backward") {
      const auto* dy = static_cast<const float*>(a.tensor("dy"));
      const auto* x = static_cast<const float*>(a.tensor("x"));
      const auto* gamma = static_cast<const float*>(a.tensor("gamma"));
      const void* saved = a.tensor("saved");
      auto* dx = static_cast<float*>(a.tensor("dx"));
      auto* dgamma = static_cast<float*>(a.tensor("dgamma"));
      auto* dbeta = static_cast<float*>(a.tensor("dbeta"));
      auto run = backward_;
      call.invoke = [=] { return run(dy, x, gamma, saved, rows, dim, eps, dx, dgamma, dbeta, stream); };
      return call;
    }
    throw harness::HarnessError("layernorm_backward has no op '" + op + "'");
  }

  std::string last_error() const override {
    const char* message = last_error_();
    return message ? message : "(layernorm_last_error returned NULL)";
  }

 private:
  decltype(&layernorm_abi_version) version_ = nullptr;
  decltype(&layernorm_saved_state_bytes) saved_bytes_ = nullptr;
  decltype(&layernorm_forward) forward_ = nullptr;
  decltype(&layernorm_backward) backward_ = nullptr;
  decltype(&layernorm_last_error) last_error_ = nullptr;
};

}  // namespace

HARNESS_REGISTER_ABI_ADAPTER("layernorm_backward", LayerNormAdapter);

}  // namespace layernorm
