// The anti-cheating checks of CaseContext and the shared single-op driver,
// driven by a fake executor that misbehaves on purpose.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness/challenge_api/case_context.h"
#include "harness/challenge_api/stateless_driver.h"
#include "harness/witness/device_memory.h"
#include "harness/witness/timing_witness.h"
#include "support/test_support.h"
#include "harness_abi.h"

namespace harness {
namespace {

using protocol::Access;

// Runs `behaviour` on the bindings of every call; time() runs it once per set
// and round, giving the sets fresh inputs between rounds when asked to.
class FakeExecutor : public Executor {
 public:
  std::function<int32_t(const std::vector<Binding>&, int call_index)> behaviour;
  int calls = 0;
  int rounds = 1;
  std::optional<double> witness_ns;  // what the harness's clock saw around time(), if anything

  protocol::CallReply call(const std::string&, const nlohmann::json&, const std::vector<Binding>& tensors, double) override {
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
void write_double(const std::vector<Binding>& t) {
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
    CaseContext ctx(spec, settings, executor, device, result);
    SharedTensor& x = ctx.tensor(TensorSpec{"x", DType::f32, {2, 4}});
    SharedTensor& y = ctx.tensor(TensorSpec{"y", DType::f32, {2, 4}});
    for (int i = 0; i < 8; ++i) x.as<float>()[i] = static_cast<float>(i);
    ctx.call("double", {}, {{&x, Access::in}, {&y, Access::out}});
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
    step.arguments = {{"x", Access::in}, {"y", Access::out}};
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
    op.refresh = [](uint64_t seed, HostTensors& in) {
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
    CaseContext ctx(spec, settings, executor, device, result);
    run_stateless_case(ctx, doubling_op());
  }
};

VerdictException verdict_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const VerdictException& v) {
    return v;
  }
  return VerdictException(Verdict::pass, "");
}

TEST(CaseContext, ACorrectCallPasses) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    write_double(t);
    return HARNESS_STATUS_OK;
  };
  EXPECT_NO_THROW(f.call_once());
}

TEST(CaseContext, AnElementLeftUnwrittenIsFoundWithItsIndex) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    const float keep = t[1].tensor->as<float>()[6];  // the poison
    write_double(t);
    t[1].tensor->as<float>()[6] = keep;
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { f.call_once(); });
  EXPECT_EQ(v.verdict(), Verdict::unwritten_output);
  EXPECT_NE(v.message().find("1 of 8 elements"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find("[1, 2]"), std::string::npos) << v.message();
}

TEST(CaseContext, WritesPastEitherEndAreOutOfBounds) {
  for (int offset : {8, -1}) {
    Fixture f;
    f.executor.behaviour = [offset](const std::vector<Binding>& t, int) {
      write_double(t);
      t[1].tensor->as<float>()[offset] = 1.0f;
      return HARNESS_STATUS_OK;
    };
    const auto v = verdict_of([&] { f.call_once(); });
    EXPECT_EQ(v.verdict(), Verdict::out_of_bounds_write) << offset;
    EXPECT_NE(v.message().find(offset > 0 ? "after its end" : "before its start"), std::string::npos) << v.message();
  }
}

TEST(CaseContext, AModifiedInputIsReportedWithOldAndNewValue) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    write_double(t);
    t[0].tensor->as<float>()[3] = -5.0f;
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { f.call_once(); });
  EXPECT_EQ(v.verdict(), Verdict::input_modified);
  EXPECT_NE(v.message().find("3 became -5"), std::string::npos) << v.message();
}

TEST(CaseContext, StatusesBecomeUnsupportedAndError) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>&, int) { return HARNESS_STATUS_UNSUPPORTED; };
  EXPECT_EQ(verdict_of([&] { f.call_once(); }).verdict(), Verdict::unsupported);
  f.executor.behaviour = [](const std::vector<Binding>&, int) { return HARNESS_STATUS_ERROR; };
  const auto v = verdict_of([&] { f.call_once(); });
  EXPECT_EQ(v.verdict(), Verdict::error);
  EXPECT_NE(v.message().find("fake message"), std::string::npos);
}

TEST(CaseContext, OutOfBoundsIsReportedBeforeUnwrittenOutput) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    t[1].tensor->as<float>()[8] = 0.0f;  // writes past the end, and nothing inside
    return HARNESS_STATUS_OK;
  };
  EXPECT_EQ(verdict_of([&] { f.call_once(); }).verdict(), Verdict::out_of_bounds_write);
}

TEST(StatelessDriver, TwoCorrectCallsPassAndRecordMetrics) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    write_double(t);
    return HARNESS_STATUS_OK;
  };
  EXPECT_NO_THROW(f.run_driver());
  EXPECT_EQ(f.executor.calls, 2);
  EXPECT_EQ(f.result.metrics["errors"], 0);
}

TEST(StatelessDriver, ReturningTheFirstAnswerAgainIsStale) {
  Fixture f;
  std::vector<float> first(16);
  f.executor.behaviour = [&first](const std::vector<Binding>& t, int call) {
    if (call == 0) {
      write_double(t);
      std::memcpy(first.data(), t[1].tensor->raw(), 64);
    } else {
      std::memcpy(t[1].tensor->raw(), first.data(), 64);
    }
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { f.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::stale_output) << v.message();
}

TEST(StatelessDriver, ASecondWrongAnswerIsWrongAnswerNotStale) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int call) {
    write_double(t);
    if (call == 1) t[1].tensor->as<float>()[0] += 1;
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { f.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::wrong_answer);
  EXPECT_NE(v.message().find("second call"), std::string::npos);
}

TEST(StatelessDriver, PerfCasesTimeEverySetAndCatchSkippedWork) {
  Fixture f(Suite::perf);
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    write_double(t);
    return HARNESS_STATUS_OK;
  };
  EXPECT_NO_THROW(f.run_driver());
  ASSERT_TRUE(f.result.timing.has_value());
  EXPECT_GE(f.result.timing->sets, 2u);
  EXPECT_DOUBLE_EQ(f.result.timing->summary.median, 1000.0);
  ASSERT_TRUE(f.result.bandwidth.has_value());
  EXPECT_DOUBLE_EQ(*f.result.bandwidth, 64 / 1e-6);

  // A submission that does nothing in timed repetitions leaves the poison
  // the harness wrote before them.
  Fixture cheat(Suite::perf);
  cheat.executor.behaviour = [](const std::vector<Binding>& t, int call) {
    if (call < 2) write_double(t);
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { cheat.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::unwritten_output);
  EXPECT_NE(v.message().find("timed repetitions"), std::string::npos) << v.message();
}

// Two ops sharing a state, like layernorm's forward and backward: "save"
// writes s = x + 1 into an opaque state, "use" reads it and writes z = s * 3.
StatelessCase two_step_op() {
  StatelessCase op;
  op.tensors = {TensorSpec{"x", DType::f32, {8}}, TensorSpec{"state", DType::u8, {64}}, TensorSpec{"z", DType::f32, {8}}};
  op.generated = {"x"};
  op.generate = [](uint64_t seed, HostTensors& in) {
    Rng rng(seed);
    for (size_t i = 0; i < 8; ++i) in.at("x").as<float>()[i] = static_cast<float>(rng.normal());
  };
  OpStep save;
  save.op = "save";
  save.arguments = {{"x", Access::in}, {"state", Access::opaque}};
  OpStep use;
  use.op = "use";
  use.arguments = {{"state", Access::in}, {"z", Access::out}};
  use.check = [](const HostTensors& in, const TensorViews& t) {
    CheckReport r;
    for (size_t i = 0; i < 8; ++i) r.ok = r.ok && t.at("z").as<float>()[i] == 3 * (in.at("x").as<float>()[i] + 1);
    if (!r.ok) r.message = "z wrong";
    return r;
  };
  op.steps = {save, use};
  return op;
}

// The fake's "save" writes only 32 of the 64 state bytes: opaque outputs may
// keep poison. `stale` makes "use" read the state of the latest "save".
int32_t two_step_behaviour(const std::vector<Binding>& t, bool stale, std::vector<float>& latest) {
  if (t[0].tensor->spec().name == "x") {
    float* state = t[1].tensor->as<float>();
    for (size_t i = 0; i < 8; ++i) state[i] = t[0].tensor->as<float>()[i] + 1;
    latest.assign(state, state + 8);
  } else {
    const float* state = stale ? latest.data() : t[0].tensor->as<float>();
    for (size_t i = 0; i < 8; ++i) t[1].tensor->as<float>()[i] = 3 * state[i];
  }
  return HARNESS_STATUS_OK;
}

TEST(StatelessDriver, OpsShareTensorsAndOpaqueStatesMayKeepPoison) {
  Fixture f;
  std::vector<float> latest;
  f.executor.behaviour = [&](const std::vector<Binding>& t, int) { return two_step_behaviour(t, false, latest); };
  CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result);
  EXPECT_NO_THROW(run_stateless_case(ctx, two_step_op()));
  EXPECT_EQ(f.executor.calls, 4);
}

// A worker claiming 1.5 us per call while the harness's clock saw the
// request take 1 s: forged_timing, naming both figures. Without the witness
// the same reply passes with its claimed speed.
TEST(StatelessDriver, ATimingTheHarnessClockContradictsIsForged) {
  auto doubling = [](const std::vector<Binding>& t, int) {
    write_double(t);
    return HARNESS_STATUS_OK;
  };
  Fixture forged(Suite::perf);
  forged.executor.behaviour = doubling;
  forged.executor.witness_ns = 1e9;
  const auto v = verdict_of([&] { forged.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::forged_timing) << v.message();
  EXPECT_NE(v.message().find("1000.000 ms"), std::string::npos) << v.message();

  Fixture unwitnessed(Suite::perf);
  unwitnessed.executor.behaviour = doubling;
  EXPECT_NO_THROW(unwitnessed.run_driver());
  EXPECT_DOUBLE_EQ(unwitnessed.result.timing->scored_median_ns(), 1000.0);

  // A witness that agrees (the calls, 0.1 ms claimed, plus the request's
  // stated cost) stands.
  Fixture honest(Suite::perf);
  honest.executor.behaviour = doubling;
  honest.executor.witness_ns = witness_per_request_ns(honest.device.kind, false) + 0.1e6;
  EXPECT_NO_THROW(honest.run_driver());
  ASSERT_TRUE(honest.result.timing->witness.has_value());
}

// The timed op binds 128 KiB of a case's 1.1 MiB; with a 1 MiB cache the
// sets must be counted by the timed op's tensors (16 sets), not by the
// case's (2 sets, 256 KiB together: warm, so no speed is impossible).
TEST(StatelessDriver, SetsAreCountedByTheTimedOpsTensorsSoTheCaseIsCold) {
  Fixture f(Suite::perf);
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    if (t.size() == 2 && t[0].tensor->spec().name == "a") {
      std::memset(t[1].tensor->raw(), 1, t[1].tensor->bytes());
    } else {
      std::memcpy(t[1].tensor->raw(), t[0].tensor->raw(), t[1].tensor->bytes());
    }
    return HARNESS_STATUS_OK;
  };
  StatelessCase op;
  op.tensors = {TensorSpec{"a", DType::f32, {256 * 1024}}, TensorSpec{"s", DType::f32, {16 * 1024}},
                TensorSpec{"z", DType::f32, {16 * 1024}}, TensorSpec{"b", DType::f32, {1}}};
  op.generated = {"a", "b"};
  op.generate = [](uint64_t, HostTensors& in) {
    std::memset(in.at("a").raw(), 0, in.at("a").bytes());
    std::memset(in.at("b").raw(), 0, in.at("b").bytes());
  };
  op.refresh = [](uint64_t, HostTensors& in) { in.at("b").as<float>()[0] += 1; };
  op.refreshed = {"b"};
  op.rows = 1;
  op.check_row = [](const HostTensors&, const TensorViews&, int64_t) { return CheckReport{}; };
  OpStep fill;
  fill.op = "fill";
  fill.arguments = {{"a", Access::in}, {"s", Access::opaque}};
  OpStep copy;
  copy.op = "copy";
  copy.arguments = {{"s", Access::in}, {"z", Access::out}, {"b", Access::in}};
  op.steps = {fill, copy};
  op.timed_step = 1;
  CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result);
  EXPECT_NO_THROW(run_stateless_case(ctx, op));
  ASSERT_TRUE(f.result.timing.has_value());
  EXPECT_EQ(f.result.timing->sets, 16u);
  EXPECT_TRUE(f.result.timing->cache_cold);
}

TEST(StatelessDriver, ALaterOpReadingAnotherSetsStateIsCaught) {
  // Both "save" calls run before either "use": a "use" that reads the state
  // of the latest "save" instead of the one it is given fails on set 0.
  Fixture f;
  std::vector<float> latest;
  f.executor.behaviour = [&](const std::vector<Binding>& t, int) { return two_step_behaviour(t, true, latest); };
  CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result);
  const auto v = verdict_of([&] { run_stateless_case(ctx, two_step_op()); });
  EXPECT_EQ(v.verdict(), Verdict::wrong_answer);
  EXPECT_EQ(v.message().rfind("use: z wrong", 0), 0u) << v.message();
}

// Fresh inputs for stateful timed calls (kv_cache's decode). The exploit: a
// cache that remembers each answer by the address of its queries and hands
// it back when called on them again (cpu-replay-attend). Timed over sets
// whose inputs never change, it gets through; with fresh inputs every
// round, what it hands back answers the queries of the round before.
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
std::vector<std::vector<Binding>> doubling_sets(CaseContext& ctx, int64_t n, std::vector<SharedTensor*>& xs,
                                                std::vector<SharedTensor*>& ys) {
  std::vector<std::vector<Binding>> sets;
  for (int s = 0; s < 2; ++s) {
    xs.push_back(&ctx.tensor(TensorSpec{"x", DType::f32, {n}}));
    ys.push_back(&ctx.tensor(TensorSpec{"y", DType::f32, {n}}));
    for (int64_t i = 0; i < n; ++i) xs.back()->as<float>()[i] = static_cast<float>(s * 10000 + i);
    sets.push_back({{xs.back(), Access::in}, {ys.back(), Access::out}});
  }
  return sets;
}

struct FreshTiming : AddressReplay {
  std::vector<SharedTensor*> xs, ys;
  int refreshes = 0;

  // Times the op over two sets; true when every set's y is 2x at the end.
  bool answers_current_inputs(bool fresh) {
    CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result);
    const auto sets = doubling_sets(ctx, 4, xs, ys);
    StageInputs new_inputs;
    if (fresh) {
      new_inputs = [this](InputStage& stage) {
        ++refreshes;
        for (auto* x : xs) {
          float next[4];
          for (int i = 0; i < 4; ++i) next[i] = x->as<float>()[i] + 100;
          stage.stage(*x, next);
        }
      };
    }
    ctx.time("double", {}, sets, new_inputs);
    for (size_t s = 0; s < xs.size(); ++s) {
      for (int i = 0; i < 4; ++i) {
        if (ys[s]->as<float>()[i] != 2 * xs[s]->as<float>()[i]) return false;
      }
    }
    return true;
  }
};

TEST(FreshInputs, AnAnswerRememberedByAddressPassesWithoutThem) {
  FreshTiming t;
  EXPECT_TRUE(t.answers_current_inputs(false));
  EXPECT_EQ(t.refreshes, 0);
}

TEST(FreshInputs, WithThemARememberedAnswerNoLongerMatchesItsInputs) {
  FreshTiming t;
  EXPECT_FALSE(t.answers_current_inputs(true));
  EXPECT_EQ(t.refreshes, 2);  // before every round but the first
}

TEST(FreshInputs, AnInputChangedDuringARoundIsCaughtAtTheNextRound) {
  FreshTiming t;
  t.f.executor.behaviour = [](const std::vector<Binding>& b, int call) {
    write_double(b);
    if (call == 1) b[0].tensor->as<float>()[2] = -1;
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { t.answers_current_inputs(true); });
  EXPECT_EQ(v.verdict(), Verdict::input_modified) << v.message();
  EXPECT_NE(v.message().find("round 1, input set 2 of 2"), std::string::npos) << v.message();
}

// New inputs are staged, and only what differs is written (InputStage).
TEST(InputStage, WritesOnlyTheWordsThatDifferAndOnlyWhenPublished) {
  SharedTensor t(1, TensorSpec{"x", DType::f32, {5}});  // 20 bytes: two words and a 4-byte tail
  for (int i = 0; i < 5; ++i) t.as<float>()[i] = static_cast<float>(i);
  float next[5] = {0, 1, 2, 30, 40};
  InputStage stage;
  stage.stage(t, next);
  EXPECT_EQ(stage.changed_bytes(), 12u);  // the word of elements 2-3, the tail (element 4)
  EXPECT_EQ(t.as<float>()[3], 3.0f);      // nothing visible before publish()
  std::vector<unsigned char> snapshot(static_cast<const unsigned char*>(t.raw()),
                                      static_cast<const unsigned char*>(t.raw()) + t.bytes());
  EXPECT_TRUE(stage.apply(t, snapshot.data()));
  EXPECT_EQ(std::memcmp(snapshot.data(), next, sizeof next), 0);
  stage.publish();
  EXPECT_EQ(std::memcmp(t.raw(), next, sizeof next), 0);
  SharedTensor other(2, TensorSpec{"z", DType::f32, {5}});
  EXPECT_FALSE(stage.apply(other, snapshot.data()));
}

// The head start (softmax_topk's cpu-exploit-head-start): a worker's thread
// watches its inputs between requests and starts on new ones as they
// appear. Written in place, early, they appear while the harness still has
// the round to prepare (here: the outputs still hold the last round's
// answers, unpoisoned); staged, they appear when everything else is done.
struct InputWatcher {
  Fixture f{Suite::perf};
  std::vector<SharedTensor*> xs, ys;
  std::atomic<int> seen{0};                // new inputs seen, one per round after the first
  std::vector<bool> outputs_were_poisoned;  // at each sight, every set's outputs held only poison
  std::atomic<bool> stop{false};

  static float load(const float* p) {
    uint32_t bits = __atomic_load_n(reinterpret_cast<const uint32_t*>(p), __ATOMIC_ACQUIRE);
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

  void watch(float last) {
    while (!stop.load()) {
      const float now = load(xs[0]->as<float>());
      if (now == last) continue;
      last = now;
      bool poisoned = true;
      for (auto* y : ys) poisoned = poisoned && count_poison(y->raw(), y->elements(), DType::f32, nullptr) == y->elements();
      outputs_were_poisoned.push_back(poisoned);
      seen.fetch_add(1);
    }
  }

  void wait_until_seen(int count) {
    for (int i = 0; i < 100000 && seen.load() < count; ++i) std::this_thread::sleep_for(std::chrono::microseconds(100));
    ASSERT_GE(seen.load(), count) << "the watcher never saw new inputs";
  }

  // Times the doubling op over two sets for three rounds; new inputs staged
  // or, with `in_place`, written straight into the sets' tensors.
  void run(bool in_place) {
    f.executor.rounds = 3;
    CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result);
    const auto sets = doubling_sets(ctx, 1024, xs, ys);
    int round = 0;
    const StageInputs fresh = [&](InputStage& stage) {
      ++round;
      for (auto* x : xs) {
        std::vector<float> next(x->as<float>(), x->as<float>() + 1024);
        for (float& v : next) v += 100;
        if (in_place) std::memcpy(x->raw(), next.data(), x->bytes());
        else stage.stage(*x, next.data());
      }
      // Written in place, the rest of the round's preparation comes after
      // the watcher has seen them.
      if (in_place) wait_until_seen(round);
    };
    f.executor.behaviour = [&](const std::vector<Binding>& t, int call) {
      if (call % 2 == 0 && call > 0) wait_until_seen(call / 2);  // a round's first call: its inputs seen
      write_double(t);
      return HARNESS_STATUS_OK;
    };
    // What the watcher starts from is read here: a thread started late must
    // not take the next round's inputs for the first.
    std::thread watcher([this, first = load(xs[0]->as<float>())] { watch(first); });
    try {
      ctx.time("double", {}, sets, fresh);
    } catch (...) {
      stop = true;
      watcher.join();
      throw;
    }
    stop = true;
    watcher.join();
  }
};

TEST(FreshInputs, NewInputsWrittenInPlaceAppearWhileTheHarnessStillPreparesTheRound) {
  InputWatcher w;
  const auto v = verdict_of([&] { w.run(true); });
  ASSERT_FALSE(w.outputs_were_poisoned.empty());
  EXPECT_FALSE(w.outputs_were_poisoned.front()) << "seen only once the outputs were poisoned";
  // And the harness's snapshot of the inputs no longer matches them.
  EXPECT_EQ(v.verdict(), Verdict::input_modified) << v.message();
}

TEST(FreshInputs, StagedInputsAppearOnlyWhenTheRoundIsReady) {
  InputWatcher w;
  const auto v = verdict_of([&] { w.run(false); });
  EXPECT_EQ(v.verdict(), Verdict::pass) << v.message();
  ASSERT_EQ(w.outputs_were_poisoned.size(), 2u);  // before rounds 2 and 3
  for (bool poisoned : w.outputs_were_poisoned) EXPECT_TRUE(poisoned);
}

// The same exploit on a pure function (softmax_topk's
// cpu-exploit-replay-spin): the driver's timed calls rotate through sets
// whose inputs stay put unless the case refreshes them between rounds.
using StatelessReplay = AddressReplay;

// The doubling op with one defence taken away: the replay gets through.
void expect_gets_through_without(StatelessReplay& r, const std::function<void(StatelessCase&)>& take_away) {
  StatelessCase op = r.f.doubling_op();
  take_away(op);
  CaseContext ctx(r.f.spec, r.f.settings, r.f.executor, r.f.device, r.f.result);
  EXPECT_NO_THROW(run_stateless_case(ctx, op));
}

TEST(StatelessDriver, AnAnswerRememberedByAddressPassesWhenNothingIsRefreshed) {
  StatelessReplay r;
  expect_gets_through_without(r, [](StatelessCase& op) { op.refresh = [](uint64_t, HostTensors&) {}; });
}

TEST(StatelessDriver, RefreshedInputsBetweenRoundsMakeARememberedAnswerWrong) {
  StatelessReplay r;
  const auto v = verdict_of([&] { r.f.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::wrong_answer) << v.message();
  EXPECT_NE(v.message().find("timed repetitions"), std::string::npos) << v.message();
}

// Answers computed ahead from inputs the submission predicts
// (cpu-exploit-predicted-refresh): a refresh seeded from what a worker can
// read (the printed seed is on the harness's command line) is a function it
// can evaluate. Here the worker knows the doubling op's refresh and how the
// harness once seeded it from the case's seed (set s, round r:
// derive_seed(derive_seed(case seed, s), "refresh/r")), and answers the
// inputs it predicts, not those it gets.
uint64_t seed_from_the_printed_one(uint64_t case_seed, size_t set, int round) {
  return derive_seed(derive_seed(case_seed, set), "refresh/" + std::to_string(round));
}

struct PredictedRefresh : StatelessReplay {
  struct Set {
    size_t index;
    int round = 1;
    std::vector<float> x;  // as the round of the next call will have it
  };
  std::map<const void*, Set> predicted;

  PredictedRefresh() {
    f.executor.rounds = 3;
    f.executor.behaviour = [this](const std::vector<Binding>& t, int) {
      const float* x = t[0].tensor->as<float>();
      auto [it, first] = predicted.try_emplace(t[0].tensor->raw(),
                                               Set{predicted.size(), 1, std::vector<float>(x, x + t[0].tensor->elements())});
      Set& set = it->second;
      if (!first) {
        const uint64_t seed = seed_from_the_printed_one(f.result.seed, set.index, set.round++);
        for (float& v : set.x) v += static_cast<float>(1 + seed % 3);  // the refresh, as the harness does it
      }
      float* y = t[1].tensor->as<float>();
      for (size_t i = 0; i < set.x.size(); ++i) y[i] = 2 * set.x[i];
      return HARNESS_STATUS_OK;
    };
  }
};

TEST(StatelessDriver, AnswersPredictedFromARefreshSeedTheWorkerKnowsPass) {
  PredictedRefresh r;
  expect_gets_through_without(r, [case_seed = r.f.result.seed](StatelessCase& op) {
    // The refresh seeded as it once was; each set known by its inputs.
    op.refresh = [refresh = op.refresh, case_seed, sets = std::map<const HostTensors*, std::pair<size_t, int>>()](
                     uint64_t, HostTensors& in) mutable {
      auto& [index, round] = sets.try_emplace(&in, sets.size(), 0).first->second;
      refresh(seed_from_the_printed_one(case_seed, index, ++round), in);
    };
  });
}

TEST(StatelessDriver, RefreshesFromSecretSeedsMakePredictedAnswersWrong) {
  PredictedRefresh r;
  const auto v = verdict_of([&] { r.f.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::wrong_answer) << v.message();
  EXPECT_NE(v.message().find("round 2"), std::string::npos) << v.message();
}

// A subtler replay: an answer remembered by address is handed back in the
// second round only (of three), so the outputs at the end are right. Only
// a check of the rounds before the last sees it.
struct ReplayInOneRound : StatelessReplay {
  std::map<const void*, int> calls_at;

  ReplayInOneRound() {
    f.executor.behaviour = [this](const std::vector<Binding>& t, int) {
      const bool second_round = calls_at[t[0].tensor->raw()]++ == 1;
      auto it = remembered.find(t[0].tensor->raw());
      if (second_round && it != remembered.end()) {
        std::memcpy(t[1].tensor->raw(), it->second.data(), it->second.size() * sizeof(float));
        return HARNESS_STATUS_OK;
      }
      write_double(t);
      const float* y = t[1].tensor->as<float>();
      remembered[t[0].tensor->raw()].assign(y, y + t[1].tensor->elements());
      return HARNESS_STATUS_OK;
    };
  }
};

TEST(StatelessDriver, AnAnswerReplayedInOneRoundPassesWithoutRowChecksBetweenRounds) {
  ReplayInOneRound r;
  expect_gets_through_without(r, [](StatelessCase& op) {
    op.check_row = [](const HostTensors&, const TensorViews&, int64_t) { return CheckReport{}; };
  });
}

TEST(StatelessDriver, RowChecksBetweenRoundsCatchAnAnswerReplayedInOneRound) {
  ReplayInOneRound r;
  const auto v = verdict_of([&] { r.f.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::wrong_answer) << v.message();
  EXPECT_NE(v.message().find("round 2, input set 1 of"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find("a spot check between rounds"), std::string::npos) << v.message();
}

// Work skipped in a round before the last leaves the poison the harness
// wrote before that round; it is seen between rounds, not only at the end.
TEST(StatelessDriver, WorkSkippedInARoundBeforeTheLastIsUnwrittenOutput) {
  Fixture f(Suite::perf);
  f.executor.rounds = 3;
  std::map<const void*, int> calls_at;
  f.executor.behaviour = [&](const std::vector<Binding>& t, int) {
    if (calls_at[t[0].tensor->raw()]++ != 1) write_double(t);  // rounds 1 and 3
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { f.run_driver(); });
  EXPECT_EQ(v.verdict(), Verdict::unwritten_output) << v.message();
  EXPECT_NE(v.message().find("round 2"), std::string::npos) << v.message();
}

TEST(StatelessDriver, APerfCaseMustRefreshOnlyWhatNoEarlierOpRead) {
  Fixture f(Suite::perf);
  std::vector<float> latest;
  f.executor.behaviour = [&](const std::vector<Binding>& t, int) { return two_step_behaviour(t, false, latest); };
  StatelessCase op = two_step_op();
  op.timed_step = 1;
  CaseContext without(f.spec, f.settings, f.executor, f.device, f.result);
  EXPECT_THROW(run_stateless_case(without, op), HarnessError);
  op.refresh = [](uint64_t, HostTensors&) {};
  op.refreshed = {"x"};  // "save" read it: its state would go stale
  op.rows = 8;
  op.check_row = [](const HostTensors&, const TensorViews&, int64_t) { return CheckReport{}; };
  CaseContext stale(f.spec, f.settings, f.executor, f.device, f.result);
  try {
    run_stateless_case(stale, op);
    ADD_FAILURE() << "refreshing what an earlier op read was accepted";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("read by save"), std::string::npos) << e.what();
  }
}

// A GPU worker's memory score takes its claim as at least what the driver
// saw it grow by, less the device's allowance (64 MiB) and less what its
// contract lets a GPU hold beyond the claim.
TEST(CaseContext, AGpuMemoryScoreTakesTheClaimAsAtLeastTheDevicesGrowthBeyondItsAllowances) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  Fixture f;
  f.device.id = "cuda:0";
  f.device.kind = "cuda";
  // A claim of 1 GiB, 1178 MiB grown: within the verdict's 1.1x + 64 MiB,
  // so it passes, but scores as what it holds beyond the allowance.
  f.executor.device_readings = {{600 * kMiB, "", 0}, {(600 + 1178) * kMiB, "", 0}};
  CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result);
  const CaseContext::MemoryBaseline baseline = ctx.memory_baseline();
  EXPECT_EQ(ctx.witness_memory("after the call", 1024 * kMiB, baseline), (1178 - 64) * kMiB);
  EXPECT_EQ(f.result.metrics["witnessed_device_memory_bytes"], 1178 * kMiB);

  // A kv_cache's pool allocated up front within its budget (1 GiB, with an
  // attend's 76 MiB of scores) while 100 MiB of it is in use is what its
  // contract allows: the score keeps its claim (36 MiB < 100 MiB).
  f.executor.device_readings = {{600 * kMiB, "", 0}, {(600 + 1100) * kMiB, "", 0}};
  f.executor.next_reading = 0;
  const CaseContext::MemoryBaseline pool_baseline = ctx.memory_baseline();
  EXPECT_EQ(ctx.witness_memory("after an append", 100 * kMiB, pool_baseline, 1100 * kMiB), 36 * kMiB);

  // Without a reading there is nothing to take it as.
  f.executor.device_readings = {{std::nullopt, "no driver", 0}};
  f.executor.next_reading = 0;
  EXPECT_EQ(ctx.witness_memory("after the call", 1024 * kMiB, ctx.memory_baseline()), 0);
}

// A GPU worker's host memory is judged against its claim as a CPU worker's
// is, with its runtime's allowance (64 MiB) in place of the CPU's: 500 MiB
// grown beyond a claim of 16 KiB is understated_memory in both, 40 MiB
// only in the CPU worker. What the GPU worker holds beyond the allowance
// adds to the score's floor; with the verdict off it passes.
TEST(CaseContext, AGpuWorkersHostMemoryIsJudgedWithItsRuntimesAllowance) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  constexpr int64_t kClaim = 16 * 1024;
  auto gpu_fixture = [](int64_t grown) {
    auto f = std::make_unique<Fixture>();
    f->device.id = "cuda:0";
    f->device.kind = "cuda";
    f->executor.resident_readings = {300 * kMiB, 300 * kMiB + grown};
    f->executor.device_readings = {{600 * kMiB, "", 0}};
    return f;
  };
  {
    auto gpu = gpu_fixture(500 * kMiB);
    CaseContext ctx(gpu->spec, gpu->settings, gpu->executor, gpu->device, gpu->result);
    const VerdictException o = verdict_of([&] { ctx.witness_memory("after forward", kClaim, ctx.memory_baseline()); });
    EXPECT_EQ(o.verdict(), Verdict::understated_memory);
    EXPECT_NE(o.message().find("after forward"), std::string::npos) << o.message();
    EXPECT_EQ(gpu->result.metrics["witnessed_host_memory_bytes"], 500 * kMiB);
    EXPECT_FALSE(gpu->result.metrics.contains("witnessed_memory_bytes"));
  }
  {
    auto gpu = gpu_fixture(40 * kMiB);
    CaseContext ctx(gpu->spec, gpu->settings, gpu->executor, gpu->device, gpu->result);
    EXPECT_EQ(ctx.witness_memory("after forward", kClaim, ctx.memory_baseline()), 0);
    EXPECT_EQ(gpu->result.metrics["witnessed_host_memory_bytes"], 40 * kMiB);
  }
  {
    testing::ScopedEnv off("HARNESS_WITNESS_DISABLE", "gpu-host-memory-verdict");
    auto gpu = gpu_fixture(500 * kMiB);
    CaseContext ctx(gpu->spec, gpu->settings, gpu->executor, gpu->device, gpu->result);
    EXPECT_EQ(ctx.witness_memory("after forward", kClaim, ctx.memory_baseline()), (500 - 64) * kMiB);
  }
  Fixture cpu;
  cpu.executor.resident_readings = {300 * kMiB, 340 * kMiB};
  CaseContext cpu_ctx(cpu.spec, cpu.settings, cpu.executor, cpu.device, cpu.result);
  EXPECT_EQ(verdict_of([&] { cpu_ctx.witness_memory("after forward", kClaim, cpu_ctx.memory_baseline()); }).verdict(),
            Verdict::understated_memory);
}

TEST(StatelessDriver, MetricsKeepTheWorstValue) {
  nlohmann::json worst = {{"err", 1.0}, {"name", "a"}};
  merge_worst_metrics(worst, {{"err", 0.5}, {"name", "b"}, {"new", 3}});
  EXPECT_EQ(worst["err"], 1.0);
  EXPECT_EQ(worst["name"], "b");
  EXPECT_EQ(worst["new"], 3);
  merge_worst_metrics(worst, {{"err", 2.0}});
  EXPECT_EQ(worst["err"], 2.0);
}

}  // namespace
}  // namespace harness
