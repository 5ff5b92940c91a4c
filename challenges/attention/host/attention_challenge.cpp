// attention: the harness side of the challenge (README.md beside this
// folder). Each case runs one op through the stateless driver: a forward
// on generated q, k and v; or a backward on generated q, k, v and dout with
// the harness's own float64 forward (o, lse) as its saved state.
#include <vector>

#include "attention.h"
#include "attention/sdpa_reference.h"
#include "attn_case.h"
#include "check.h"
#include "data.h"
#include "harness/challenge_api/challenge.h"
#include "harness/challenge_api/input_refresh.h"
#include "harness/challenge_api/stateless_driver.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "memory_score.h"

namespace attention {

namespace {

using harness::DType;
using harness::TensorSpec;

nlohmann::json scalars_of(const AttnCase& c) {
  return {{"batch", c.batch}, {"heads_q", c.heads_q}, {"heads_kv", c.heads_kv}, {"n_q", c.n_q},
          {"n_kv", c.n_kv},   {"dim", c.dim},         {"scale", c.scale()},     {"causal", c.causal ? 1 : 0}};
}

ForwardTensors forward_tensors(const harness::HostTensors& in, const harness::TensorViews& t) {
  return {in.at("q").as<float>(), in.at("k").as<float>(), in.at("v").as<float>(), t.at("o").as<float>(),
          t.at("lse").as<float>()};
}

BackwardTensors backward_tensors(const harness::HostTensors& in, const harness::TensorViews& t) {
  return {in.at("q").as<float>(), in.at("k").as<float>(),   in.at("v").as<float>(),
          in.at("o").as<float>(), in.at("lse").as<float>(), in.at("dout").as<float>(),
          t.at("dq").as<float>(), t.at("dk").as<float>(),   t.at("dv").as<float>()};
}

class AttentionChallenge : public harness::Challenge {
 public:
  std::string name() const override { return "attention"; }
  int abi_version() const override { return ATTENTION_ABI_VERSION; }
  std::vector<harness::CaseSpec> cases() const override { return case_matrix(); }

  void run_case(const harness::CaseSpec& spec, harness::CaseContext& ctx) const override {
    const AttnCase c = attn_case_of(spec, ctx.device().kind);
    if (spec.suite == harness::Suite::perf) {
      const nlohmann::json shape = scalars_of(c);
      for (const auto& [key, value] : shape.items()) ctx.params()[key] = value;
      ctx.set_byte_model(bytes_of(c));
      ctx.metrics()["flops"] = c.flops();
    }
    const Tolerances tolerances = element_tolerances();
    const std::vector<int64_t> kv_heads = checked_kv_heads(c, harness::derive_seed(ctx.input_seed(0), "kv heads"));
    if (static_cast<int64_t>(kv_heads.size()) < c.batch * c.heads_kv) {
      ctx.metrics()["checked_kv_heads"] = kv_heads.size();
    }
    const std::vector<int64_t> q_shape{c.batch, c.heads_q, c.n_q, c.dim}, kv_shape{c.batch, c.heads_kv, c.n_kv, c.dim};
    harness::StatelessCase op;
    op.tensors = {TensorSpec{"q", DType::f32, q_shape}, TensorSpec{"k", DType::f32, kv_shape},
                  TensorSpec{"v", DType::f32, kv_shape}, TensorSpec{"o", DType::f32, q_shape},
                  TensorSpec{"lse", DType::f32, {c.batch, c.heads_q, c.n_q}}};
    harness::OpStep step;
    step.op = op_name(c.op);
    step.scalars = scalars_of(c);
    step.peak_memory = true;
    op.rows = c.q_rows();
    if (c.op == Op::forward) {
      op.generated = {"q", "k", "v"};
      op.generate = [c](uint64_t seed, harness::HostTensors& in) {
        generate_inputs(c, seed, in.at("q").as<float>(), in.at("k").as<float>(), in.at("v").as<float>(), nullptr);
      };
      step.check = [c, tolerances, kv_heads](const harness::HostTensors& in, const harness::TensorViews& t) {
        return check_forward(c, forward_tensors(in, t), tolerances, kv_heads);
      };
      op.check_row = [c, tolerances](const harness::HostTensors& in, const harness::TensorViews& t, int64_t row) {
        return check_forward_row(c, forward_tensors(in, t), row, tolerances);
      };
      // Every query's o changes in two columns; lse, and so o's scale, stays.
      op.refreshed = {"v"};
      op.refresh = [c](uint64_t seed, harness::HostTensors& in, harness::RefreshedElements& changed) {
        harness::swap_two_in_each_row(in.at("v").as<float>(), c.kv_rows(), c.dim, seed, &changed["v"]);
      };
    } else {
      for (const char* name : {"dout", "dq"}) op.tensors.push_back(TensorSpec{name, DType::f32, q_shape});
      for (const char* name : {"dk", "dv"}) op.tensors.push_back(TensorSpec{name, DType::f32, kv_shape});
      op.generated = {"q", "k", "v", "o", "lse", "dout"};
      op.generate = [c](uint64_t seed, harness::HostTensors& in) {
        float* q = in.at("q").as<float>();
        float* k = in.at("k").as<float>();
        float* v = in.at("v").as<float>();
        generate_inputs(c, seed, q, k, v, in.at("dout").as<float>());
        forward_of(c, q, k, v, in.at("o").as<float>(), in.at("lse").as<float>());
      };
      step.check = [c, tolerances, kv_heads](const harness::HostTensors& in, const harness::TensorViews& t) {
        return check_backward(c, backward_tensors(in, t), tolerances, kv_heads);
      };
      op.check_row = [c, tolerances](const harness::HostTensors& in, const harness::TensorViews& t, int64_t row) {
        return check_backward_row(c, backward_tensors(in, t), row, tolerances);
      };
      // dq of every row and dk, dv of every key change; o and lse still fit.
      op.refreshed = {"dout"};
      op.refresh = [c](uint64_t seed, harness::HostTensors& in, harness::RefreshedElements& changed) {
        harness::swap_two_in_each_row(in.at("dout").as<float>(), c.q_rows(), c.dim, seed, &changed["dout"]);
      };
    }
    op.steps = {step};
    op.timed_step = 0;
    // Compute-bound: three sets suffice against remembered answers, and
    // each costs a float64 check.
    op.timing_sets = 3;
    harness::run_stateless_case(ctx, op);
    record_memory_allowance(c, ctx);
  }

  nlohmann::json solve(const std::string& op, const nlohmann::json& scalars,
                       const std::map<std::string, harness::TensorView>& in,
                       const std::map<std::string, void*>& out) const override {
    AttnCase c;
    c.batch = scalars.at("batch").get<int64_t>();
    c.heads_q = scalars.at("heads_q").get<int64_t>();
    c.heads_kv = scalars.at("heads_kv").get<int64_t>();
    c.n_q = scalars.at("n_q").get<int64_t>();
    c.n_kv = scalars.at("n_kv").get<int64_t>();
    c.dim = scalars.at("dim").get<int64_t>();
    c.causal = scalars.at("causal").get<int>() != 0;
    c.given_scale = scalars.at("scale").get<float>();
    const float* q = in.at("q").as<float>();
    const float* k = in.at("k").as<float>();
    const float* v = in.at("v").as<float>();
    if (op == "forward") {
      forward_of(c, q, k, v, static_cast<float*>(out.at("o")), static_cast<float*>(out.at("lse")));
      return nlohmann::json::object();
    }
    HARNESS_CHECK(op == "backward", "attention has no op '{}'", op);
    backward_of(c, q, k, v, in.at("dout").as<float>(), static_cast<float*>(out.at("dq")),
                static_cast<float*>(out.at("dk")), static_cast<float*>(out.at("dv")));
    return nlohmann::json::object();
  }

  std::map<std::string, harness::DimensionScore> extra_dimensions(const harness::EntryResult& entry) const override {
    return {{"memory", memory_score(entry)}};
  }
};

}  // namespace

HARNESS_REGISTER_CHALLENGE(AttentionChallenge);

}  // namespace attention
