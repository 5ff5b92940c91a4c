#include "kv_cache/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace reference {

void causal_attention_row(const float* keys, const float* values, int64_t tokens, const float* query, int64_t n,
                          int64_t i, int q_heads, int kv_heads, int head_dim, double* out_row) {
  const int64_t position = tokens - n + i;
  const int group = q_heads / kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  std::vector<double> scores(static_cast<size_t>(position + 1));
  for (int h = 0; h < q_heads; ++h) {
    const int g = h / group;
    const float* q = query + static_cast<int64_t>(h) * head_dim;
    double max = -INFINITY;
    for (int64_t t = 0; t <= position; ++t) {
      const float* k = keys + (t * kv_heads + g) * head_dim;
      // Four running sums, not one: a single chain of dependent float64
      // additions made this loop the slowest part of the largest cases.
      double partial[4] = {0, 0, 0, 0};
      int j = 0;
      for (; j + 4 <= head_dim; j += 4) {
        for (int lane = 0; lane < 4; ++lane) partial[lane] += static_cast<double>(q[j + lane]) * k[j + lane];
      }
      for (; j < head_dim; ++j) partial[0] += static_cast<double>(q[j]) * k[j];
      const double dot = (partial[0] + partial[1]) + (partial[2] + partial[3]);
      scores[static_cast<size_t>(t)] = dot * scale;
      max = std::max(max, scores[static_cast<size_t>(t)]);
    }
    double sum = 0;
    for (int64_t t = 0; t <= position; ++t) sum += scores[static_cast<size_t>(t)] = std::exp(scores[static_cast<size_t>(t)] - max);
    double* out = out_row + static_cast<int64_t>(h) * head_dim;
    std::fill(out, out + head_dim, 0.0);
    for (int64_t t = 0; t <= position; ++t) {
      const float* v = values + (t * kv_heads + g) * head_dim;
      const double w = scores[static_cast<size_t>(t)] / sum;
      for (int j = 0; j < head_dim; ++j) out[j] += w * v[j];
    }
  }
}

void causal_attention(const float* keys, const float* values, int64_t tokens, const float* queries, int64_t n,
                      int q_heads, int kv_heads, int head_dim, double* out) {
  const int64_t row = static_cast<int64_t>(q_heads) * head_dim;
  for (int64_t i = 0; i < n; ++i) {
    causal_attention_row(keys, values, tokens, queries + i * row, n, i, q_heads, kv_heads, head_dim, out + i * row);
  }
}

}  // namespace reference
