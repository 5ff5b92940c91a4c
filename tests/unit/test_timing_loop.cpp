// The timing loop's whole rounds, for timings whose inputs change between
// rounds (FreshInputs).
#include <gtest/gtest.h>

#include <vector>

#include "harness/timing/timing_loop.h"

namespace harness {
namespace {

protocol::TimingPolicy shortest() {
  protocol::TimingPolicy p;
  p.warmup_ms = 0;
  p.min_samples = 1;
  p.min_ms = 0;
  p.max_ms = 0;  // stop as soon as the fewest samples are in
  return p;
}

TEST(TimingLoop, WithoutRoundsItStopsAtTheFewestSamples) {
  std::vector<size_t> sets;
  const auto reply = run_timing_loop(
      3,
      [&](size_t s) {
        sets.push_back(s);
        return TimedCall{0, 1, 1};
      },
      shortest());
  EXPECT_EQ(reply.warmup_calls, 3u);
  EXPECT_EQ(reply.device_ns.size(), kMinimumSamples);
}

TEST(TimingLoop, WithRoundsEveryRoundIsWholeAndNewInputsComeBeforeEachButTheFirst) {
  std::vector<size_t> sets;
  int rounds_started = 0;
  std::vector<size_t> calls_at_new_round;
  const auto reply = run_timing_loop(
      3,
      [&](size_t s) {
        sets.push_back(s);
        return TimedCall{0, 1, 1};
      },
      shortest(),
      [&] {
        ++rounds_started;
        calls_at_new_round.push_back(sets.size());
      });
  EXPECT_EQ(reply.warmup_calls % 3, 0u);
  EXPECT_EQ(reply.device_ns.size(), 6u);  // 5 rounded up to whole rounds of 3
  const size_t total = reply.warmup_calls + reply.device_ns.size();
  EXPECT_EQ(static_cast<size_t>(rounds_started), total / 3 - 1);
  for (size_t at : calls_at_new_round) EXPECT_EQ(at % 3, 0u) << at;
  for (size_t i = 0; i < sets.size(); ++i) EXPECT_EQ(sets[i], i % 3) << i;
}

// The median is checked after whole rounds only: with 3 sets and a check
// every 10 calls, none fell due before the 30th call, so a settled timing
// needed 90 calls where 18 now do.
TEST(TimingLoop, TheMedianIsCheckedAfterWholeRoundsOfAtLeastSixCalls) {
  protocol::TimingPolicy policy;
  for (const size_t sets : {1, 2, 3, 4, 7}) {
    const TimingStopRule rule(policy, sets);
    EXPECT_EQ(rule.check_every() % sets, 0u) << sets;
    EXPECT_GE(rule.check_every(), kCallsPerCheck) << sets;
    EXPECT_LT(rule.check_every(), kCallsPerCheck + sets) << sets;
  }
  // Equal samples settle at the third check (two steady ones in a row).
  policy.warmup_ms = 0;
  policy.min_samples = 10;
  policy.min_ms = 0;
  for (const size_t sets : {2, 3}) {
    const auto reply = run_timing_loop(
        sets,
        [](size_t) {
          return TimedCall{0, 1000, 1000};
        },
        policy, [] {});
    EXPECT_EQ(reply.device_ns.size(), 3 * TimingStopRule(policy, sets).check_every()) << sets;
  }
}

}  // namespace
}  // namespace harness
