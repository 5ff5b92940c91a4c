// The shared single-op driver (run_stateless_case): its calls, stale and
// wrong answers, ops sharing a state, timed sets and the harness's clock
// around them, driven by a fake executor that misbehaves on purpose.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "case_context_fixture.h"
#include "harness/core/error.h"
#include "harness/witness/timing_witness.h"
#include "harness_abi.h"

namespace harness {
namespace {

using testing::Fixture;
using testing::test_ops;
using testing::verdict_of;
using testing::write_double;

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
  op.tensors = {TensorSpec{"x", DType::f32, {8}}, TensorSpec{"state", DType::u8, {64}},
                TensorSpec{"z", DType::f32, {8}}};
  op.generated = {"x"};
  op.generate = [](uint64_t seed, HostTensors& in) {
    Rng rng(seed);
    for (size_t i = 0; i < 8; ++i) in.at("x").as<float>()[i] = static_cast<float>(rng.normal());
  };
  OpStep save;
  save.op = "save";
  OpStep use;
  use.op = "use";
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
  CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
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

// A perf case whose timed op (copy) binds 128 KiB of the case's 1.1 MiB.
struct FillThenCopy {
  Fixture f{Suite::perf};
  StatelessCase op;
  FillThenCopy() {
    f.executor.behaviour = [](const std::vector<Binding>& t, int) {
      if (t.size() == 2 && t[0].tensor->spec().name == "a") {
        std::memset(t[1].tensor->raw(), 1, t[1].tensor->bytes());
      } else {
        std::memcpy(t[1].tensor->raw(), t[0].tensor->raw(), t[1].tensor->bytes());
      }
      return HARNESS_STATUS_OK;
    };
    op.tensors = {TensorSpec{"a", DType::f32, {256 * 1024}}, TensorSpec{"s", DType::f32, {16 * 1024}},
                  TensorSpec{"z", DType::f32, {16 * 1024}}, TensorSpec{"b", DType::f32, {1}}};
    op.generated = {"a", "b"};
    op.generate = [](uint64_t, HostTensors& in) {
      std::memset(in.at("a").raw(), 0, in.at("a").bytes());
      std::memset(in.at("b").raw(), 0, in.at("b").bytes());
    };
    op.refresh = [](uint64_t, HostTensors& in, RefreshedElements&) { in.at("b").as<float>()[0] += 1; };
    op.refreshed = {"b"};
    op.rows = 1;
    op.check_row = [](const HostTensors&, const TensorViews&, int64_t) { return CheckReport{}; };
    OpStep fill;
    fill.op = "fill";
    OpStep copy;
    copy.op = "copy";
    op.steps = {fill, copy};
    op.timed_step = 1;
  }
  void run() {
    CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
    EXPECT_NO_THROW(run_stateless_case(ctx, op));
    ASSERT_TRUE(f.result.timing.has_value());
  }
};

// With a 1 MiB cache the sets must be counted by the timed op's tensors (16
// sets), not by the case's (2 sets, 256 KiB together: warm, so no speed is
// impossible).
TEST(StatelessDriver, SetsAreCountedByTheTimedOpsTensorsSoTheCaseIsCold) {
  FillThenCopy c;
  c.run();
  EXPECT_EQ(c.f.result.timing->sets, 16u);
  EXPECT_TRUE(c.f.result.timing->cache_cold);
}

// A compute-bound op asks for fewer sets; its timing says it ran warm.
TEST(StatelessDriver, ACaseMayAskForFewerSetsAndIsThenWarm) {
  FillThenCopy c;
  c.op.timing_sets = 3;
  c.run();
  EXPECT_EQ(c.f.result.timing->sets, 3u);
  EXPECT_FALSE(c.f.result.timing->cache_cold);
}

TEST(StatelessDriver, ALaterOpReadingAnotherSetsStateIsCaught) {
  // Both "save" calls run before either "use": a "use" that reads the state
  // of the latest "save" instead of the one it is given fails on set 0.
  Fixture f;
  std::vector<float> latest;
  f.executor.behaviour = [&](const std::vector<Binding>& t, int) { return two_step_behaviour(t, true, latest); };
  CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
  const auto v = verdict_of([&] { run_stateless_case(ctx, two_step_op()); });
  EXPECT_EQ(v.verdict(), Verdict::wrong_answer);
  EXPECT_EQ(v.message().rfind("use: z wrong", 0), 0u) << v.message();
}

TEST(StatelessDriver, APerfCaseMustRefreshOnlyWhatNoEarlierOpRead) {
  Fixture f(Suite::perf);
  std::vector<float> latest;
  f.executor.behaviour = [&](const std::vector<Binding>& t, int) { return two_step_behaviour(t, false, latest); };
  StatelessCase op = two_step_op();
  op.timed_step = 1;
  CaseContext without(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
  EXPECT_THROW(run_stateless_case(without, op), HarnessError);
  op.refresh = [](uint64_t, HostTensors&, RefreshedElements&) {};
  op.refreshed = {"x"};  // "save" read it: its state would go stale
  op.rows = 8;
  op.check_row = [](const HostTensors&, const TensorViews&, int64_t) { return CheckReport{}; };
  CaseContext stale(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
  try {
    run_stateless_case(stale, op);
    ADD_FAILURE() << "refreshing what an earlier op read was accepted";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("read by save"), std::string::npos) << e.what();
  }
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
