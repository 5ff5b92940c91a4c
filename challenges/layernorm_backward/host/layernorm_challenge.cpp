// layernorm_backward: the harness side of the challenge (README.md beside
// this folder): a query for the saved-state size, then forward and backward
// through the stateless driver; the memory score from the declared size.
#include <algorithm>
#include <optional>
#include <vector>

#include "check.h"
#include "data.h"
#include "harness/challenge_api/challenge.h"
#include "harness/challenge_api/stateless_driver.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "layernorm_backward.h"
#include "layernorm_backward/layernorm_reference.h"
#include "ln_case.h"

namespace layernorm {

namespace {

using harness::DType;
using harness::TensorSpec;

// A saved state beyond this is refused rather than allocated: 16 times the
// input, plus 1 MiB.
int64_t saved_state_limit(const LnCase& c) { return 16 * 4 * c.rows * c.dim + (1 << 20); }

class LayerNormChallenge : public harness::Challenge {
 public:
  std::string name() const override { return "layernorm_backward"; }
  int abi_version() const override { return LAYERNORM_ABI_VERSION; }
  std::vector<harness::CaseSpec> cases() const override { return case_matrix(); }

  void run_case(const harness::CaseSpec& spec, harness::CaseContext& ctx) const override {
    const LnCase c = ln_case_of(spec, harness::derive_seed(ctx.input_seed(0), "shape"));
    if (spec.params.contains("drawn")) {
      ctx.params()["rows"] = c.rows;
      ctx.params()["dim"] = c.dim;
    }
    const Tolerances tolerances = element_tolerances();
    const nlohmann::json shape = {{"rows", c.rows}, {"dim", c.dim}};
    const auto reply = ctx.call("saved_state_bytes", shape, {});
    if (!reply.scalars.contains("bytes") || !reply.scalars["bytes"].is_number_integer()) {
      ctx.fail(harness::Verdict::error, "layernorm_saved_state_bytes reported no size");
    }
    const auto saved_bytes = reply.scalars["bytes"].get<int64_t>();
    if (saved_bytes < 0 || saved_bytes > saved_state_limit(c)) {
      ctx.fail(harness::Verdict::error,
               fmt::format("layernorm_saved_state_bytes declares {} bytes for {} x {}: outside 0..{}", saved_bytes,
                           c.rows, c.dim, saved_state_limit(c)));
    }
    ctx.metrics()["saved_state_bytes"] = saved_bytes;
    ctx.metrics()["minimum_saved_state_bytes"] = minimum_saved_bytes(c.rows);

    harness::StatelessCase op;
    op.tensors = {TensorSpec{"x", DType::f32, {c.rows, c.dim}},  TensorSpec{"gamma", DType::f32, {c.dim}},
                  TensorSpec{"beta", DType::f32, {c.dim}},       TensorSpec{"y", DType::f32, {c.rows, c.dim}},
                  TensorSpec{"saved", DType::u8, {saved_bytes}}, TensorSpec{"dy", DType::f32, {c.rows, c.dim}},
                  TensorSpec{"dx", DType::f32, {c.rows, c.dim}}, TensorSpec{"dgamma", DType::f32, {c.dim}},
                  TensorSpec{"dbeta", DType::f32, {c.dim}}};
    // A timed forward runs the forward alone: no dy, dx, dgamma or dbeta
    // (two 128 MB tensors per set at the largest shapes, never read).
    const bool forward_alone = ctx.timing_wanted() && c.ops == Ops::forward;
    if (forward_alone) op.tensors.resize(5);
    op.generated = {"x", "gamma", "beta"};
    if (!forward_alone) op.generated.push_back("dy");
    op.generate = [c, forward_alone](uint64_t seed, harness::HostTensors& in) {
      generate_inputs(c, seed, in.at("x").as<float>(), in.at("gamma").as<float>(), in.at("beta").as<float>(),
                      forward_alone ? nullptr : in.at("dy").as<float>());
    };
    const nlohmann::json scalars = {{"rows", c.rows}, {"dim", c.dim}, {"eps", c.eps}};
    harness::OpStep forward;
    forward.op = "forward";
    forward.scalars = scalars;
    // The memory witness: what the worker holds after a forward, beyond what
    // it held before the first, is state kept for the backward whether or
    // not it was declared.
    const harness::CaseContext::MemoryBaseline resident_before = ctx.memory_baseline();
    forward.check = [c, tolerances, saved_bytes, resident_before, &ctx](const harness::HostTensors& in,
                                                                        const harness::TensorViews& t) {
      const int64_t held = std::max(saved_bytes, ctx.witness_memory("after forward, against the declared saved state",
                                                                    saved_bytes, resident_before));
      auto& scored = ctx.metrics()["saved_state_bytes_held"];
      if (!scored.is_number() || scored.get<int64_t>() < held) scored = held;
      return check_forward(c, in.at("x").as<float>(), in.at("gamma").as<float>(), in.at("beta").as<float>(),
                           t.at("y").as<float>(), tolerances);
    };
    harness::OpStep backward;
    backward.op = "backward";
    backward.scalars = scalars;
    backward.check = [c, tolerances](const harness::HostTensors& in, const harness::TensorViews& t) {
      return check_backward(c, in.at("dy").as<float>(), in.at("x").as<float>(), in.at("gamma").as<float>(),
                            t.at("dx").as<float>(), t.at("dgamma").as<float>(), t.at("dbeta").as<float>(), tolerances);
    };
    op.steps = {forward};
    if (!forward_alone) op.steps.push_back(backward);
    op.timed_step = c.ops == Ops::forward ? 0 : 1;
    // The timed forward reads x, the timed backward dy (x also, but the
    // saved state a forward made of it must stay true).
    const std::string refreshed = c.ops == Ops::forward ? "x" : "dy";
    op.refresh = [c, refreshed](uint64_t seed, harness::HostTensors& in, harness::RefreshedElements& changed) {
      swap_two_in_each_row(c, seed, in.at(refreshed).as<float>(), &changed[refreshed]);
    };
    op.refreshed = {refreshed};
    op.rows = c.rows;
    op.check_row = [c, tolerances](const harness::HostTensors& in, const harness::TensorViews& t, int64_t row) {
      LnCase one = c;
      one.rows = 1;
      const int64_t at = row * c.dim;
      if (c.ops == Ops::forward) {
        return check_forward(one, in.at("x").as<float>() + at, in.at("gamma").as<float>(), in.at("beta").as<float>(),
                             t.at("y").as<float>() + at, tolerances);
      }
      return check_dx_row(one, in.at("dy").as<float>() + at, in.at("x").as<float>() + at, in.at("gamma").as<float>(),
                          t.at("dx").as<float>() + at, tolerances);
    };
    harness::run_stateless_case(ctx, op);
  }

  nlohmann::json solve(const std::string& op, const nlohmann::json& scalars,
                       const std::map<std::string, harness::TensorView>& in,
                       const std::map<std::string, void*>& out) const override {
    const auto rows = scalars.at("rows").get<int64_t>();
    const auto dim = scalars.at("dim").get<int64_t>();
    if (op == "saved_state_bytes") return {{"bytes", minimum_saved_bytes(rows)}};
    const double eps = scalars.at("eps").get<float>();
    const auto n = static_cast<size_t>(rows * dim);
    auto wide = [](const harness::TensorView& v) {
      return std::vector<double>(v.as<float>(), v.as<float>() + v.elements());
    };
    auto narrow = [](const std::vector<double>& v, void* target) {
      for (size_t i = 0; i < v.size(); ++i) static_cast<float*>(target)[i] = static_cast<float>(v[i]);
    };
    if (op == "forward") {
      std::vector<double> y(n), mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
      const auto x = wide(in.at("x"));
      reference::layernorm_forward(x.data(), wide(in.at("gamma")).data(), wide(in.at("beta")).data(), rows, dim, eps,
                                   y.data());
      reference::layernorm_statistics(x.data(), rows, dim, eps, mean.data(), rstd.data());
      narrow(y, out.at("y"));
      // The saved state this answer declared: mean and rstd per row.
      auto* saved = static_cast<float*>(out.at("saved"));
      for (int64_t r = 0; r < rows; ++r) {
        saved[2 * r] = static_cast<float>(mean[static_cast<size_t>(r)]);
        saved[2 * r + 1] = static_cast<float>(rstd[static_cast<size_t>(r)]);
      }
      return nlohmann::json::object();
    }
    HARNESS_CHECK(op == "backward", "layernorm_backward has no op '{}'", op);
    std::vector<double> dx(n), dgamma(static_cast<size_t>(dim)), dbeta(static_cast<size_t>(dim));
    reference::layernorm_backward(wide(in.at("dy")).data(), wide(in.at("x")).data(), wide(in.at("gamma")).data(), rows,
                                  dim, eps, dx.data(), dgamma.data(), dbeta.data());
    narrow(dx, out.at("dx"));
    narrow(dgamma, out.at("dgamma"));
    narrow(dbeta, out.at("dbeta"));
    return nlohmann::json::object();
  }

  // Memory: the minimum saved state (2 floats per row) over the declared
  // one, averaged over the cases that declared one (0 for those that did
  // not pass).
  std::map<std::string, harness::DimensionScore> extra_dimensions(const harness::EntryResult& entry) const override {
    harness::DimensionScore memory;
    double sum = 0;
    size_t count = 0;
    double worst_ratio = 0;
    for (const auto& c : entry.cases) {
      if (c.suite == harness::Suite::perf || !c.metrics.contains("saved_state_bytes")) continue;
      // What the memory witness saw held, where it is above the declaration.
      const double declared = c.metrics.value("saved_state_bytes_held", c.metrics["saved_state_bytes"].get<double>());
      const double minimum = c.metrics["minimum_saved_state_bytes"].get<double>();
      // A case that did not pass scores 0: its declaration is no measure.
      if (c.verdict == harness::Verdict::pass) sum += declared <= minimum ? 1.0 : minimum / declared;
      worst_ratio = std::max(worst_ratio, minimum > 0 ? declared / minimum : 0.0);
      ++count;
    }
    memory.measured = count > 0;
    memory.score = count ? 100.0 * sum / static_cast<double>(count) : 0.0;
    memory.detail = count ? fmt::format("saved state up to {:.1f}x the minimum of 2 floats per row", worst_ratio) : "";
    return {{"memory", memory}};
  }
};

}  // namespace

HARNESS_REGISTER_CHALLENGE(LayerNormChallenge);

}  // namespace layernorm
