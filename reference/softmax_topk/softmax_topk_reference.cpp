#include "softmax_topk/softmax_topk_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace reference {

double log_sum_exp(const float* row, int64_t vocab) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < vocab; ++j) max = std::max(max, static_cast<double>(row[j]));
  double sum = 0.0;
  for (int64_t j = 0; j < vocab; ++j) sum += std::exp(static_cast<double>(row[j]) - max);
  return max + std::log(sum);
}

double softmax_at(const float* row, int64_t column, double row_log_sum_exp) {
  return std::exp(static_cast<double>(row[column]) - row_log_sum_exp);
}

void softmax_topk(const float* logits, int64_t rows, int64_t vocab, int64_t k, double* probs, int32_t* indices) {
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = logits + r * vocab;
    const double lse = log_sum_exp(row, vocab);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [row](int32_t a, int32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
    for (int64_t j = 0; j < k; ++j) {
      indices[r * k + j] = order[static_cast<size_t>(j)];
      probs[r * k + j] = softmax_at(row, order[static_cast<size_t>(j)], lse);
    }
  }
}

}  // namespace reference
