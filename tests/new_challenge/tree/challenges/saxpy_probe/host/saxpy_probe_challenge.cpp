// saxpy_probe: the harness side of the challenge: its cases, its one op,
// its check against float64 and its trusted answer.
#include <cmath>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "harness/challenge_api/stateless_driver.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "saxpy_probe.h"
#include "saxpy_probe/saxpy_reference.h"

namespace saxpy_probe {

namespace {

using harness::CaseSpec;
using harness::DType;
using harness::Suite;
using harness::TensorSpec;

constexpr double kRelative = 1e-6;

CaseSpec make_case(Suite suite, int64_t n, double a) {
  CaseSpec spec;
  spec.id = fmt::format("{}.n{}.a{}", harness::suite_name(suite), n, a);
  spec.suite = suite;
  spec.params = {{"n", n}, {"a", a}};
  spec.description = fmt::format("n = {}, a = {}", n, a);
  spec.quick = true;
  spec.bytes = harness::ByteModel{static_cast<double>(n) * 8, static_cast<double>(n) * 4};
  return spec;
}

harness::CheckReport check(const float* x, const float* y, int64_t n, double a, const float* z) {
  std::vector<double> expected(static_cast<size_t>(n));
  reference::saxpy(x, y, n, a, expected.data());
  harness::CheckReport report;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double scale = std::fabs(a * x[i]) + std::fabs(y[i]);
    const double error = std::fabs(static_cast<double>(z[i]) - expected[static_cast<size_t>(i)]);
    worst = std::max(worst, scale > 0 ? error / scale : error);
    if (!(error <= kRelative * scale) && report.ok) {
      report.ok = false;
      report.message = fmt::format("z[{}] = {} where float64 gives {}", i, z[i], expected[static_cast<size_t>(i)]);
    }
  }
  report.metrics["z_max_rel_error"] = worst;
  return report;
}

class SaxpyProbe : public harness::Challenge {
 public:
  std::string name() const override { return "saxpy_probe"; }
  int abi_version() const override { return SAXPY_PROBE_ABI_VERSION; }
  std::vector<CaseSpec> cases() const override {
    return {make_case(Suite::correctness, 1000, 2.5), make_case(Suite::correctness, 4099, -0.5),
            make_case(Suite::edge, 1, 3.0)};
  }

  void run_case(const CaseSpec& spec, harness::CaseContext& ctx) const override {
    const auto n = spec.params.at("n").get<int64_t>();
    const auto a = spec.params.at("a").get<double>();
    harness::StatelessCase op;
    op.tensors = {TensorSpec{"x", DType::f32, {n}}, TensorSpec{"y", DType::f32, {n}}, TensorSpec{"z", DType::f32, {n}}};
    op.generated = {"x", "y"};
    op.generate = [n](uint64_t seed, harness::HostTensors& inputs) {
      harness::Rng rng(seed);
      for (const char* name : {"x", "y"}) {
        for (int64_t i = 0; i < n; ++i) inputs.at(name).as<float>()[i] = static_cast<float>(rng.normal());
      }
    };
    harness::OpStep step;
    step.op = "saxpy";
    step.scalars = {{"n", n}, {"a", a}};
    step.check = [n, a](const harness::HostTensors& inputs, const harness::TensorViews& tensors) {
      return check(inputs.at("x").as<float>(), inputs.at("y").as<float>(), n, static_cast<float>(a),
                   tensors.at("z").as<float>());
    };
    op.steps = {step};
    harness::run_stateless_case(ctx, op);
  }

  nlohmann::json solve(const std::string& op, const nlohmann::json& scalars,
                       const std::map<std::string, harness::TensorView>& inputs,
                       const std::map<std::string, void*>& outputs) const override {
    HARNESS_CHECK(op == "saxpy", "saxpy_probe has no op '{}'", op);
    const auto n = scalars.at("n").get<int64_t>();
    std::vector<double> z(static_cast<size_t>(n));
    reference::saxpy(inputs.at("x").as<float>(), inputs.at("y").as<float>(), n, scalars.at("a").get<double>(),
                     z.data());
    auto* out = static_cast<float*>(outputs.at("z"));
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(z[static_cast<size_t>(i)]);
    return nlohmann::json::object();
  }
};

}  // namespace

HARNESS_REGISTER_CHALLENGE(SaxpyProbe);

}  // namespace saxpy_probe
