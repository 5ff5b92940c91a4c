// Float64 ground truth for kv_cache: causal attention of one sequence's
// newest queries over everything appended to it. Short and obviously right.
#pragma once

#include <cstdint>

namespace reference {

// keys, values [tokens, kv_heads, head_dim] float32, as appended
// queries     [n, q_heads, head_dim] float32: the newest n tokens, so query i
//             sits at position tokens - n + i and sees positions 0..that
// out         [n, q_heads, head_dim] float64
// Query head h reads kv head h / (q_heads / kv_heads); scores are
// q . k / sqrt(head_dim); the softmax subtracts its maximum.
void causal_attention(const float* keys, const float* values, int64_t tokens, const float* queries, int64_t n,
                      int q_heads, int kv_heads, int head_dim, double* out);

// One query row (all its heads) of the above: query index i of n.
void causal_attention_row(const float* keys, const float* values, int64_t tokens, const float* query, int64_t n,
                          int64_t i, int q_heads, int kv_heads, int head_dim, double* out_row);

}  // namespace reference
