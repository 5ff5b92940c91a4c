// The challenge's FLOP model of one forward call (challenges/attention/host,
// AttnCase::flops), for the benchmarks, which do not link the harness:
// 4 * dim per (query, visible key) pair, the causal mask at the bottom right.
#pragma once

#include <algorithm>
#include <cstdint>

inline double attention_forward_flops(int64_t batch, int64_t heads_q, int64_t n_q, int64_t n_kv, int64_t dim,
                                      bool causal) {
  double pairs = 0;  // of one head
  for (int64_t i = 0; i < n_q; ++i)
    pairs += static_cast<double>(causal ? std::clamp<int64_t>(i + n_kv - n_q + 1, 0, n_kv) : n_kv);
  return 4.0 * static_cast<double>(dim) * pairs * static_cast<double>(batch * heads_q);
}
