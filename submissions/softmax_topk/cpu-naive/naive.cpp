// Naive CPU softmax + top-k: the baseline every fast kernel is measured
// against. It does what the maths says, one step at a time, on one thread:
//   1. the whole softmax of every row into a [rows, vocab] temporary
//      (max, exp, sum, divide): the tensor a fused kernel never writes;
//   2. each row's column indices sorted far enough to know the first k
//      (std::partial_sort), then those k.
// The sort ranks by logit, which orders the probabilities exactly: ranking by
// the rounded probabilities would not, where exp underflows to 0 (a +-1e4 row
// has thousands of probabilities equal to 0 and different logits).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "abi_support.h"
#include "softmax_topk.h"

namespace {

void naive_softmax_topk(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices) {
  std::vector<float> softmax(static_cast<size_t>(rows * vocab));  // [rows, vocab]
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits + r * vocab;
    float* p = softmax.data() + r * vocab;
    float m = x[0];
    for (int64_t i = 1; i < vocab; ++i) m = std::max(m, x[i]);
    // A double sum: one float accumulator over 262144 terms drifts by ~1e-4
    // relative (measured), the whole tolerance.
    double sum = 0.0;
    for (int64_t i = 0; i < vocab; ++i) {
      p[i] = std::exp(x[i] - m);
      sum += p[i];
    }
    for (int64_t i = 0; i < vocab; ++i) p[i] = static_cast<float>(p[i] / sum);
  }

  std::vector<int32_t> order(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits + r * vocab;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [x](int32_t a, int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
    for (int64_t j = 0; j < k; ++j) {
      probs[r * k + j] = softmax[static_cast<size_t>(r * vocab + order[j])];
      indices[r * k + j] = order[j];
    }
  }
}

harness_status run(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices,
                   void* /*stream*/) {
  naive_softmax_topk(logits, rows, vocab, k, probs, indices);
  return HARNESS_STATUS_OK;
}

}  // namespace

SOFTMAX_TOPK_EXPORT_ABI(run)
