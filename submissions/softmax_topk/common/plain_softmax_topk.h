// A plain, correct softmax_topk on one thread, in double: what the exploits
// (submissions/softmax_topk/exploits) and the test fixtures
// (tests/fixtures/softmax_topk) wrap, so that the only thing wrong with each
// is the behaviour it is there to show. Never a submission of its own.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace plain {

inline void softmax_topk(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices) {
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits + r * vocab;
    const double max = *std::max_element(x, x + vocab);
    double sum = 0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(x[j] - max);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [x](int32_t a, int32_t b) { return x[a] != x[b] ? x[a] > x[b] : a < b; });
    for (int64_t j = 0; j < k; ++j) {
      indices[r * k + j] = order[static_cast<size_t>(j)];
      probs[r * k + j] = static_cast<float>(std::exp(x[order[static_cast<size_t>(j)]] - max) / sum);
    }
  }
}

}  // namespace plain
