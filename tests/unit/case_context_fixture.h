// The fake executor behind the tests of CaseContext, the stateless driver
// and fresh inputs: it runs a behaviour the test gives it on every call's
// bindings, misbehaving on purpose, and reports what the harness's clock and
// memory readings should see. The op under test doubles its input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/challenge_api/case_context.h"
#include "harness/challenge_api/stateless_driver.h"
#include "harness/core/rng.h"
#include "harness/witness/device_memory.h"
#include "harness_abi.h"

namespace harness::testing {

// The declarations of the fake ops these tests call (a challenge declares
// its own in its challenge.json).
inline const ChallengeOps& test_ops() {
  static const ChallengeOps ops = parse_challenge_ops("test", nlohmann::json::parse(R"({
    "abi": {"header": "test.h", "version": "TEST_ABI_VERSION", "version_function": "test_abi_version",
            "last_error_function": "test_last_error"},
    "ops": [
      {"op": "double", "function": "test_double", "parameters": [
        {"name": "x", "kind": "in", "dtype": "float32", "shape": ["n"]},
        {"name": "y", "kind": "out", "dtype": "float32", "shape": ["n"]}]},
      {"op": "double_matrix", "function": "test_double_matrix", "parameters": [
        {"name": "x", "kind": "in", "dtype": "float32", "shape": ["rows", "cols"]},
        {"name": "y", "kind": "out", "dtype": "float32", "shape": ["rows", "cols"]}]},
      {"op": "save", "function": "test_save", "parameters": [
        {"name": "x", "kind": "in", "dtype": "float32", "shape": ["n"]},
        {"name": "state", "kind": "state", "dtype": "bytes", "shape": ["bytes"]}]},
      {"op": "use", "function": "test_use", "parameters": [
        {"name": "state", "kind": "in", "dtype": "bytes", "shape": ["bytes"]},
        {"name": "z", "kind": "out", "dtype": "float32", "shape": ["n"]}]},
      {"op": "fill", "function": "test_fill", "parameters": [
        {"name": "a", "kind": "in", "dtype": "float32", "shape": ["m"]},
        {"name": "s", "kind": "state", "dtype": "float32", "shape": ["k"]}]},
      {"op": "copy", "function": "test_copy", "parameters": [
        {"name": "s", "kind": "in", "dtype": "float32", "shape": ["k"]},
        {"name": "z", "kind": "out", "dtype": "float32", "shape": ["k"]},
        {"name": "b", "kind": "in", "dtype": "float32", "shape": [1]}]}
    ]})"));
  return ops;
}

// Runs `behaviour` on the bindings of every call; time() runs it once per set
// and round, giving the sets fresh inputs between rounds when asked to.
class FakeExecutor : public Executor {
 public:
  std::function<int32_t(const std::vector<Binding>&, int call_index)> behaviour;
  int calls = 0;
  int rounds = 1;
  std::optional<double> witness_ns;  // what the harness's clock saw around time(), if anything

  protocol::CallReply call(const std::string&, const nlohmann::json&, const std::vector<Binding>& tensors,
                           double) override {
    protocol::CallReply reply;
    reply.status = behaviour(tensors, calls++);
    reply.message = "fake message";
    return reply;
  }
  protocol::TimeReply time(const std::string&, const nlohmann::json&, const std::vector<std::vector<Binding>>& sets,
                           const protocol::TimingPolicy&, double, const FreshInputs& fresh) override {
    protocol::TimeReply reply;
    for (int round = 0; round < rounds; ++round) {
      if (round > 0 && fresh) fresh();
      for (const auto& set : sets) {
        reply.status = behaviour(set, calls++);
        reply.device_ns.push_back(1000);
        reply.wall_ns.push_back(1500);
      }
    }
    if (witness_ns) {
      double claimed_ns = 0;
      for (double ns : reply.wall_ns) claimed_ns += ns;
      reply.witnessed.push_back(protocol::WitnessedRequest{*witness_ns, 0, reply.wall_ns.size(), claimed_ns, 0});
    }
    return reply;
  }
  void release(const SharedTensor&) override {}
  std::string drain_output(size_t) override { return ""; }
  std::string device_clock() const override { return "cpu-monotonic"; }

  // The harness's readings of the worker's host memory, one per call, the
  // last repeated; none when empty.
  std::vector<int64_t> resident_readings;
  size_t next_resident = 0;
  std::optional<int64_t> resident_bytes() override {
    if (resident_readings.empty()) return std::nullopt;
    return resident_readings[std::min(next_resident++, resident_readings.size() - 1)];
  }

  // The driver's readings of a GPU worker, one per call, the last repeated.
  std::vector<DeviceMemoryReading> device_readings;
  size_t next_reading = 0;
  DeviceMemoryReading device_memory() override {
    if (device_readings.empty()) return Executor::device_memory();
    return device_readings[std::min(next_reading++, device_readings.size() - 1)];
  }
};

// The op under test doubles its input: y = 2x.
inline void write_double(const std::vector<Binding>& t) {
  const float* x = t[0].tensor->as<float>();
  float* y = t[1].tensor->as<float>();
  for (size_t i = 0; i < t[1].tensor->elements(); ++i) y[i] = 2 * x[i];
}

struct Fixture {
  CaseSpec spec;
  RunSettings settings;
  DeviceInfo device;
  CaseResult result;
  FakeExecutor executor;

  explicit Fixture(Suite suite = Suite::correctness) {
    spec.id = "test.case";
    spec.suite = suite;
    spec.bytes = ByteModel{48, 16};
    device.id = "cpu";
    device.kind = "cpu";
    device.cache_bytes = 1 << 20;
    result.seed = 77;
  }

  // One call of the doubling op through CaseContext::call.
  void call_once() {
    CaseContext ctx(spec, settings, executor, device, result, test_ops());
    SharedTensor& x = ctx.tensor(TensorSpec{"x", DType::f32, {2, 4}});
    SharedTensor& y = ctx.tensor(TensorSpec{"y", DType::f32, {2, 4}});
    for (int i = 0; i < 8; ++i) x.as<float>()[i] = static_cast<float>(i);
    ctx.call("double_matrix", {}, {&x, &y});
  }

  StatelessCase doubling_op() {
    StatelessCase op;
    op.tensors = {TensorSpec{"x", DType::f32, {16}}, TensorSpec{"y", DType::f32, {16}}};
    op.generated = {"x"};
    op.generate = [](uint64_t seed, HostTensors& in) {
      Rng rng(seed);
      for (size_t i = 0; i < 16; ++i) in.at("x").as<float>()[i] = static_cast<float>(rng.normal());
    };
    OpStep step;
    step.op = "double";
    step.check = [](const HostTensors& in, const TensorViews& t) {
      CheckReport r;
      for (size_t i = 0; i < 16; ++i) {
        if (t.at("y").as<float>()[i] != 2 * in.at("x").as<float>()[i]) {
          r.ok = false;
          r.message = "element " + std::to_string(i) + " wrong";
        }
      }
      r.metrics = {{"errors", r.ok ? 0 : 1}};
      return r;
    };
    op.steps = {step};
    // Every answer changes: y = 2x of the new x.
    op.refresh = [](uint64_t seed, HostTensors& in, RefreshedElements&) {
      for (size_t i = 0; i < 16; ++i) in.at("x").as<float>()[i] += static_cast<float>(1 + seed % 3);
    };
    op.refreshed = {"x"};
    op.rows = 16;
    op.check_row = [](const HostTensors& in, const TensorViews& t, int64_t row) {
      CheckReport r;
      r.ok = t.at("y").as<float>()[row] == 2 * in.at("x").as<float>()[row];
      if (!r.ok) r.message = "row " + std::to_string(row) + " wrong";
      return r;
    };
    return op;
  }

  void run_driver() {
    CaseContext ctx(spec, settings, executor, device, result, test_ops());
    run_stateless_case(ctx, doubling_op());
  }
};

// The verdict `action` throws, or pass when it throws none.
inline VerdictException verdict_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const VerdictException& v) {
    return v;
  }
  return VerdictException(Verdict::pass, "");
}

// The replay exploit: a worker that remembers each answer by the address of
// its inputs and hands it back when called on them again (kv_cache's
// cpu-replay-attend, softmax_topk's cpu-exploit-replay-spin), timed over
// three rounds. Over sets whose inputs never change it gets through; with
// fresh inputs every round, what it hands back answers the round before.
struct AddressReplay {
  Fixture f{Suite::perf};
  std::map<const void*, std::vector<float>> remembered;

  AddressReplay() {
    f.executor.rounds = 3;
    f.executor.behaviour = [this](const std::vector<Binding>& t, int) {
      auto it = remembered.find(t[0].tensor->raw());
      if (it == remembered.end()) {
        write_double(t);
        const float* y = t[1].tensor->as<float>();
        it = remembered.emplace(t[0].tensor->raw(), std::vector<float>(y, y + t[1].tensor->elements())).first;
      }
      std::memcpy(t[1].tensor->raw(), it->second.data(), it->second.size() * sizeof(float));
      return HARNESS_STATUS_OK;
    };
  }
};

// Two sets of the doubling op's tensors of n elements; x holds values that
// differ between the sets.
inline std::vector<std::vector<SharedTensor*>> doubling_sets(CaseContext& ctx, int64_t n,
                                                             std::vector<SharedTensor*>& xs,
                                                             std::vector<SharedTensor*>& ys) {
  std::vector<std::vector<SharedTensor*>> sets;
  for (int s = 0; s < 2; ++s) {
    xs.push_back(&ctx.tensor(TensorSpec{"x", DType::f32, {n}}));
    ys.push_back(&ctx.tensor(TensorSpec{"y", DType::f32, {n}}));
    for (int64_t i = 0; i < n; ++i) xs.back()->as<float>()[i] = static_cast<float>(s * 10000 + i);
    sets.push_back({xs.back(), ys.back()});
  }
  return sets;
}

}  // namespace harness::testing
