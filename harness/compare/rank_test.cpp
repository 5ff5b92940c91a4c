#include "harness/compare/rank_test.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace harness {

RankTest mann_whitney_greater(const std::vector<double>& candidate, const std::vector<double>& baseline) {
  RankTest result;
  const size_t n1 = candidate.size();
  const size_t n2 = baseline.size();
  if (n1 < 2 || n2 < 2) return result;

  // Mid-ranks of the pooled samples; `first` marks the candidate's.
  std::vector<std::pair<double, bool>> pooled;
  pooled.reserve(n1 + n2);
  for (double v : candidate) pooled.emplace_back(v, true);
  for (double v : baseline) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum = 0;
  double tie_term = 0;  // sum of t^3 - t over groups of ties
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const auto t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum += mid_rank;
    }
    i = j;
  }
  const double a = static_cast<double>(n1);
  const double b = static_cast<double>(n2);
  const double n = a + b;
  result.u = rank_sum - a * (a + 1) / 2.0;
  const double mean = a * b / 2.0;
  const double variance = a * b / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return result;  // every sample equal: no evidence either way
  result.z = (result.u - mean - 0.5) / std::sqrt(variance);
  result.p_value = 0.5 * std::erfc(result.z / std::sqrt(2.0));
  return result;
}

}  // namespace harness
