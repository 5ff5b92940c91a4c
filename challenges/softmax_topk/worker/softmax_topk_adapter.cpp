// The worker's bridge to a softmax_topk submission's C ABI (softmax_topk.h).
#include "harness/worker/abi_adapter.h"
#include "softmax_topk.h"

namespace softmax_topk {

namespace {

class SoftmaxTopkAdapter : public harness::AbiAdapter {
 public:
  void bind(const harness::SymbolTable& symbols) override {
    version_ = symbols.require<decltype(&softmax_topk_abi_version)>("softmax_topk_abi_version");
    run_ = symbols.require<decltype(&softmax_topk_run)>("softmax_topk_run");
    last_error_ = symbols.require<decltype(&softmax_topk_last_error)>("softmax_topk_last_error");
  }

  int32_t abi_version() const override { return version_(); }
  int32_t expected_abi_version() const override { return SOFTMAX_TOPK_ABI_VERSION; }

  harness::BoundCall prepare(const std::string& op, const harness::OpArguments& args) override {
    if (op != "softmax_topk") throw harness::HarnessError("softmax_topk has no op '" + op + "'");
    const int64_t rows = args.scalar_int("rows");
    const int64_t vocab = args.scalar_int("vocab");
    const int64_t k = args.scalar_int("k");
    const auto* logits = static_cast<const float*>(args.tensor("logits"));
    auto* probs = static_cast<float*>(args.tensor("probs"));
    auto* indices = static_cast<int32_t*>(args.tensor("indices"));
    void* stream = args.stream;
    auto run = run_;
    harness::BoundCall call;
    call.invoke = [=] { return run(logits, rows, vocab, k, probs, indices, stream); };
    return call;
  }

  std::string last_error() const override {
    const char* message = last_error_();
    return message ? message : "(softmax_topk_last_error returned NULL)";
  }

 private:
  decltype(&softmax_topk_abi_version) version_ = nullptr;
  decltype(&softmax_topk_run) run_ = nullptr;
  decltype(&softmax_topk_last_error) last_error_ = nullptr;
};

}  // namespace

HARNESS_REGISTER_ABI_ADAPTER("softmax_topk", SoftmaxTopkAdapter);

}  // namespace softmax_topk
