// softmax_topk: the harness side of the challenge (README.md beside this
// folder): its cases, one op, its checker and its trusted answer.
#include <vector>

#include "check.h"
#include "data.h"
#include "harness/challenge_api/challenge.h"
#include "harness/challenge_api/stateless_driver.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "softmax_topk.h"
#include "softmax_topk/softmax_topk_reference.h"
#include "topk_case.h"

namespace softmax_topk {

namespace {

using harness::DType;
using harness::TensorSpec;

class SoftmaxTopkChallenge : public harness::Challenge {
 public:
  std::string name() const override { return "softmax_topk"; }
  int abi_version() const override { return SOFTMAX_TOPK_ABI_VERSION; }
  std::vector<harness::CaseSpec> cases() const override { return case_matrix(); }

  void run_case(const harness::CaseSpec& spec, harness::CaseContext& ctx) const override {
    const TopkCase c = topk_case_of(spec, harness::derive_seed(ctx.input_seed(0), "shape"));
    if (spec.params.contains("drawn")) {
      ctx.params()["rows"] = c.rows;
      ctx.params()["vocab"] = c.vocab;
      ctx.params()["k"] = c.k;
    }
    const Tolerance tolerance = tolerance_from_config(c.data == Data::small_terms ? "probs_small_terms" : "probs");
    harness::StatelessCase op;
    op.tensors = {TensorSpec{"logits", DType::f32, {c.rows, c.vocab}}, TensorSpec{"probs", DType::f32, {c.rows, c.k}},
                  TensorSpec{"indices", DType::i32, {c.rows, c.k}}};
    op.generated = {"logits"};
    op.generate = [c](uint64_t seed, harness::HostTensors& inputs) {
      generate_logits(c, seed, inputs.at("logits").as<float>());
    };
    op.refresh = [c](uint64_t seed, harness::HostTensors& inputs, harness::RefreshedElements& changed) {
      move_each_row_maximum(c, seed, inputs.at("logits").as<float>(), &changed["logits"]);
    };
    op.refreshed = {"logits"};
    op.rows = c.rows;
    op.check_row = [c, tolerance](const harness::HostTensors& inputs, const harness::TensorViews& tensors,
                                  int64_t row) {
      TopkCase one = c;
      one.rows = 1;
      return check_answer(one, inputs.at("logits").as<float>() + row * c.vocab,
                          tensors.at("probs").as<float>() + row * c.k, tensors.at("indices").as<int32_t>() + row * c.k,
                          tolerance);
    };
    harness::OpStep step;
    step.op = "softmax_topk";
    step.scalars = {{"rows", c.rows}, {"vocab", c.vocab}, {"k", c.k}};
    step.check = [c, tolerance](const harness::HostTensors& inputs, const harness::TensorViews& tensors) {
      return check_answer(c, inputs.at("logits").as<float>(), tensors.at("probs").as<float>(),
                          tensors.at("indices").as<int32_t>(), tolerance);
    };
    op.steps = {step};
    harness::run_stateless_case(ctx, op);
  }

  nlohmann::json solve(const std::string& op, const nlohmann::json& scalars,
                       const std::map<std::string, harness::TensorView>& inputs,
                       const std::map<std::string, void*>& outputs) const override {
    HARNESS_CHECK(op == "softmax_topk", "softmax_topk has no op '{}'", op);
    const auto rows = scalars.at("rows").get<int64_t>();
    const auto vocab = scalars.at("vocab").get<int64_t>();
    const auto k = scalars.at("k").get<int64_t>();
    std::vector<double> probs(static_cast<size_t>(rows * k));
    auto* indices = static_cast<int32_t*>(outputs.at("indices"));
    reference::softmax_topk(inputs.at("logits").as<float>(), rows, vocab, k, probs.data(), indices);
    auto* out = static_cast<float*>(outputs.at("probs"));
    for (size_t i = 0; i < probs.size(); ++i) out[i] = static_cast<float>(probs[i]);
    return nlohmann::json::object();
  }

 private:
  // The small-terms case has its own bound: a float32 sum in lanes loses
  // the small terms of the lane that holds the row's largest (README.md).
  Tolerance tolerance_from_config(const std::string& name) const {
    const auto& probs = config().tolerances.at(name);
    return Tolerance{probs.at("rtol").get<double>(), probs.at("atol").get<double>(), name};
  }
};

}  // namespace

HARNESS_REGISTER_CHALLENGE(SoftmaxTopkChallenge);

}  // namespace softmax_topk
