// Order statistics of timing samples.
#pragma once

#include <cstddef>
#include <vector>

namespace harness {

struct SampleSummary {
  size_t count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;
  double p10 = 0;
  double p90 = 0;
  // (p90 - p10) / median: how far apart typical repetitions are.
  double relative_spread = 0;
};

// Linear-interpolated quantile q in [0, 1] of unsorted samples (non-empty).
double quantile(std::vector<double> samples, double q);
double median(std::vector<double> samples);
SampleSummary summarize(const std::vector<double>& samples);

}  // namespace harness
