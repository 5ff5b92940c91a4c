#include "churn_plan.h"

#include <set>

namespace kv {

int64_t sequence_id(int64_t i) { return 1000003 * (i + 1) + 7919 * (i % 13); }

std::vector<ChurnStep> plan_churn(harness::Rng& rng, int32_t max_sequences) {
  std::vector<ChurnStep> plan;
  std::set<int64_t> live;  // ordered as the session lists its live sequences
  int64_t next = 0;
  auto release_one = [&] {
    auto it = live.begin();
    std::advance(it, static_cast<long>(rng.below(live.size())));
    plan.push_back({ChurnStep::release, *it, 0});
    live.erase(it);
  };
  for (int round = 0; round < 40; ++round) {
    const double r = rng.uniform();
    const bool forced = round % 2 == 1;
    const bool room = live.size() < static_cast<size_t>(max_sequences);
    if (forced || live.size() < 3 || (r < 0.4 && room)) {
      if (!room) release_one();
      const int64_t id = sequence_id(next++);
      plan.push_back({ChurnStep::start, id, 1 + static_cast<int64_t>(rng.below(200))});
      live.insert(id);
    } else if (r < 0.7) {
      release_one();
    } else {
      plan.push_back({ChurnStep::decode, 0, 0});
    }
  }
  return plan;
}

}  // namespace kv
