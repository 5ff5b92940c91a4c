// What the kv_cache workloads are meant to exercise holds at every seed, not
// only at the seed a run happens to print.
#include <gtest/gtest.h>

#include <set>

#include "harness/challenge_api/challenge.h"
#include "harness/core/rng.h"
#include "kv_cache/host/churn_plan.h"
#include "kv_cache/host/kv_case.h"
#include "kv_cache/host/workloads.h"

namespace kv {
namespace {

constexpr int kSeeds = 200;
constexpr int32_t kChurnSlots = 16;  // the churn workload's max_sequences

TEST(KvSeedCoverage, ChurnReusesSlotsAndMemoryAtEverySeed) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    harness::Rng rng(harness::derive_seed(seed, "script"));
    std::set<int64_t> live;
    int starts = 0, starts_after_a_release = 0, releases = 0, decodes = 0;
    for (const ChurnStep& step : plan_churn(rng, kChurnSlots)) {
      switch (step.kind) {
        case ChurnStep::start:
          ASSERT_TRUE(live.insert(step.sequence).second) << "seed " << seed << ": a live id started again";
          ASSERT_LE(live.size(), static_cast<size_t>(kChurnSlots)) << "seed " << seed;
          ASSERT_GE(step.tokens, 1);
          ASSERT_LE(step.tokens, 200);
          ++starts;
          if (releases > 0) ++starts_after_a_release;
          break;
        case ChurnStep::release:
          ASSERT_EQ(live.erase(step.sequence), 1u) << "seed " << seed << ": released a sequence not live";
          ++releases;
          break;
        case ChurnStep::decode: ++decodes; break;
      }
    }
    // More sequences than slots: a cache must give released slots again.
    EXPECT_GT(starts, kChurnSlots) << "seed " << seed;
    EXPECT_GT(starts_after_a_release, 0) << "seed " << seed;
    EXPECT_GT(releases, 0) << "seed " << seed;
  }
}

TEST(KvSeedCoverage, EveryLayeredBudgetCaseRefusesAtTheFirstLayerWhatOneLayerWouldAccept) {
  int cases = 0;
  for (const auto& spec : harness::find_challenge("kv_cache").cases()) {
    const KvCase c = kv_case_of(spec);
    if (c.workload != Workload::layered_budget) continue;
    ++cases;
    // In tokens of one layer, at the format's minimum (the workload scales
    // the budget to the format, so this holds in every format).
    const double budget = layered_budget_tokens() * c.layers;
    EXPECT_GE(c.layers, 2) << spec.id;
    EXPECT_LE(3 * 128.0 * c.layers, budget) << spec.id << ": three sequences must fit";
    EXPECT_GT(4 * 128.0 * c.layers, budget) << spec.id << ": the fourth must not";
    EXPECT_LE(3 * 128.0 * c.layers + 128.0, budget) << spec.id << ": one layer of the fourth must fit";
  }
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace kv
