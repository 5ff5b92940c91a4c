// The stateless driver's defences across timed rounds: answers remembered
// by address, predicted from a refresh seed or replayed in one round, and
// work skipped in a round before the last. Each defence against its
// exploit, and the exploit getting through without it.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "case_context_fixture.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness_abi.h"

namespace harness {
namespace {

using testing::AddressReplay;
using testing::Fixture;
using testing::test_ops;
using testing::verdict_of;
using testing::write_double;

// The same exploit on a pure function (softmax_topk's
// cpu-exploit-replay-spin): the driver's timed calls rotate through sets
// whose inputs stay put unless the case refreshes them between rounds.
using StatelessReplay = AddressReplay;

// The doubling op with one defence taken away: the replay gets through.
void expect_gets_through_without(StatelessReplay& r, const std::function<void(StatelessCase&)>& take_away) {
  StatelessCase op = r.f.doubling_op();
  take_away(op);
  CaseContext ctx(r.f.spec, r.f.settings, r.f.executor, r.f.device, r.f.result, test_ops());
  EXPECT_NO_THROW(run_stateless_case(ctx, op));
}

TEST(StatelessDriver, AnAnswerRememberedByAddressPassesWhenNothingIsRefreshed) {
  StatelessReplay r;
  expect_gets_through_without(
      r, [](StatelessCase& op) { op.refresh = [](uint64_t, HostTensors&, RefreshedElements&) {}; });
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
      auto [it, first] = predicted.try_emplace(
          t[0].tensor->raw(), Set{predicted.size(), 1, std::vector<float>(x, x + t[0].tensor->elements())});
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
                     uint64_t, HostTensors& in, RefreshedElements& changed) mutable {
      auto& [index, round] = sets.try_emplace(&in, sets.size(), 0).first->second;
      refresh(seed_from_the_printed_one(case_seed, index, ++round), in, changed);
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

}  // namespace
}  // namespace harness

namespace harness {
namespace {

// A refresh that records what it writes has only that staged, and its
// changed pristine inputs stand for the submission's; an element it wrote
// unrecorded would be blamed on the submission (input_modified, as this
// test's refresh was before the check). The driver compares the first
// round whole and refuses such a refresh, naming the element; recording
// every write passes.
TEST(StatelessDriver, ARefreshThatWritesElementsItDoesNotRecordIsRefused) {
  for (const bool records_all : {true, false}) {
    Fixture f(Suite::perf);
    f.executor.rounds = 3;
    f.executor.behaviour = [](const std::vector<Binding>& t, int) {
      write_double(t);
      return HARNESS_STATUS_OK;
    };
    StatelessCase op = f.doubling_op();
    op.refresh = [records_all](uint64_t seed, HostTensors& in, RefreshedElements& changed) {
      float* x = in.at("x").as<float>();
      x[3] += static_cast<float>(1 + seed % 3);
      x[9] += 1;
      changed["x"] = records_all ? std::vector<int64_t>{3, 9} : std::vector<int64_t>{3};
    };
    CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
    if (records_all) {
      EXPECT_NO_THROW(run_stateless_case(ctx, op));
      continue;
    }
    try {
      run_stateless_case(ctx, op);
      ADD_FAILURE() << "an unrecorded write was not refused";
    } catch (const HarnessError& e) {
      EXPECT_NE(std::string(e.what()).find("the refresh of 'x' wrote element 9 without recording it"),
                std::string::npos)
          << e.what();
    }
  }
}

// Generated inputs are checked against the driver's pristine copies
// (keep_pristine), which the refresh changes as it stages: a submission that
// writes an input in a timed round is still caught at the next round, the
// element and its pristine value named; the same run without the write passes.
TEST(StatelessDriver, AnInputWrittenInATimedRoundIsCaughtAgainstThePristineCopy) {
  for (const bool writes : {false, true}) {
    Fixture f(Suite::perf);
    f.executor.rounds = 3;
    f.executor.behaviour = [writes](const std::vector<Binding>& t, int call) {
      write_double(t);
      if (writes && call == 1) t[0].tensor->as<float>()[5] = 1234.5f;
      return HARNESS_STATUS_OK;
    };
    const auto v = verdict_of([&] { f.run_driver(); });
    if (!writes) {
      EXPECT_EQ(v.verdict(), Verdict::pass) << v.message();
      continue;
    }
    EXPECT_EQ(v.verdict(), Verdict::input_modified) << v.message();
    EXPECT_NE(v.message().find("input x was modified: 1 of 16 elements changed; first at [5]"), std::string::npos)
        << v.message();
    EXPECT_NE(v.message().find("became 1234.5"), std::string::npos) << v.message();
  }
}

}  // namespace
}  // namespace harness
