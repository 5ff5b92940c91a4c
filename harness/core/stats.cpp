#include "harness/core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness/core/error.h"

namespace harness {

namespace {
double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t lower = static_cast<size_t>(std::floor(position));
  const size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}
}  // namespace

double quantile(std::vector<double> samples, double q) {
  HARNESS_CHECK(!samples.empty(), "quantile of no samples");
  HARNESS_CHECK(q >= 0.0 && q <= 1.0, "quantile {} outside [0, 1]", q);
  std::sort(samples.begin(), samples.end());
  return sorted_quantile(samples, q);
}

double median(std::vector<double> samples) { return quantile(std::move(samples), 0.5); }

SampleSummary summarize(const std::vector<double>& samples) {
  SampleSummary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = sorted_quantile(sorted, 0.5);
  s.p10 = sorted_quantile(sorted, 0.1);
  s.p90 = sorted_quantile(sorted, 0.9);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.count);
  double squares = 0;
  for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
  s.stddev = s.count > 1 ? std::sqrt(squares / static_cast<double>(s.count - 1)) : 0.0;
  s.relative_spread = s.median > 0 ? (s.p90 - s.p10) / s.median : 0.0;
  return s;
}

}  // namespace harness
