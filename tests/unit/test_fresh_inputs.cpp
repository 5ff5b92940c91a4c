// Fresh inputs for stateful timed calls (kv_cache's decode): timed over
// sets whose inputs never change, an answer remembered by address gets
// through; with fresh inputs every round it answers the round before. New
// inputs are staged, so that a worker watching them sees them only when the
// round is ready.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "case_context_fixture.h"
#include "harness/core/dtype.h"
#include "harness_abi.h"

namespace harness {
namespace {

using testing::AddressReplay;
using testing::doubling_sets;
using testing::Fixture;
using testing::test_ops;
using testing::verdict_of;
using testing::write_double;

struct FreshTiming : AddressReplay {
  std::vector<SharedTensor*> xs, ys;
  int refreshes = 0;

  // Times the op over two sets; true when every set's y is 2x at the end.
  bool answers_current_inputs(bool fresh) {
    CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
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

// The head start (softmax_topk's cpu-exploit-head-start): a worker's thread
// watches its inputs between requests and starts on new ones as they
// appear. Written in place, early, they appear while the harness still has
// the round to prepare (here: the outputs still hold the last round's
// answers, unpoisoned); staged, they appear when everything else is done.
struct InputWatcher {
  Fixture f{Suite::perf};
  std::vector<SharedTensor*> xs, ys;
  std::atomic<int> seen{0};                 // new inputs seen, one per round after the first
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
      for (auto* y : ys)
        poisoned = poisoned && count_poison(y->raw(), y->elements(), DType::f32, nullptr) == y->elements();
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
    CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
    const auto sets = doubling_sets(ctx, 1024, xs, ys);
    int round = 0;
    const StageInputs fresh = [&](InputStage& stage) {
      ++round;
      for (auto* x : xs) {
        std::vector<float> next(x->as<float>(), x->as<float>() + 1024);
        for (float& v : next) v += 100;
        if (in_place)
          std::memcpy(x->raw(), next.data(), x->bytes());
        else
          stage.stage(*x, next.data());
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

}  // namespace
}  // namespace harness
