#include "kv_cache/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace reference {

namespace {

// q . k in float64, with four running sums: a single chain of dependent
// additions made this the slowest part of the largest cases.
double dot(const float* q, const float* k, int head_dim) {
  double partial[4] = {0, 0, 0, 0};
  int j = 0;
  for (; j + 4 <= head_dim; j += 4) {
    for (int lane = 0; lane < 4; ++lane) partial[lane] += static_cast<double>(q[j + lane]) * k[j + lane];
  }
  for (; j < head_dim; ++j) partial[0] += static_cast<double>(q[j]) * k[j];
  return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

}  // namespace

void causal_attention_row(const float* keys, const float* values, int64_t tokens, const float* query, int64_t n,
                          int64_t i, int q_heads, int kv_heads, int head_dim, double* out_row) {
  const int64_t position = tokens - n + i;
  const int64_t seen = position + 1;
  const int group = q_heads / kv_heads;
  const int64_t token_row = static_cast<int64_t>(kv_heads) * head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  // Tokens outermost, so K and V are read once, in the order they are laid
  // out: heads outermost strided over them a page per token, and waiting on
  // memory made this loop most of the largest cases' time. Each head's sums
  // still run over its tokens in order.
  std::vector<double> scores(static_cast<size_t>(q_heads * seen));  // [head][token]
  for (int64_t t = 0; t < seen; ++t) {
    for (int h = 0; h < q_heads; ++h) {
      const float* k = keys + t * token_row + static_cast<int64_t>(h / group) * head_dim;
      scores[static_cast<size_t>(h * seen + t)] = dot(query + static_cast<int64_t>(h) * head_dim, k, head_dim) * scale;
    }
  }
  std::vector<double> sums(static_cast<size_t>(q_heads), 0.0);
  for (int h = 0; h < q_heads; ++h) {
    double* s = scores.data() + h * seen;
    const double max = *std::max_element(s, s + seen);
    for (int64_t t = 0; t < seen; ++t) sums[static_cast<size_t>(h)] += s[t] = std::exp(s[t] - max);
  }
  std::fill(out_row, out_row + static_cast<int64_t>(q_heads) * head_dim, 0.0);
  for (int64_t t = 0; t < seen; ++t) {
    for (int h = 0; h < q_heads; ++h) {
      const float* v = values + t * token_row + static_cast<int64_t>(h / group) * head_dim;
      const double w = scores[static_cast<size_t>(h * seen + t)] / sums[static_cast<size_t>(h)];
      double* out = out_row + static_cast<int64_t>(h) * head_dim;
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
