// Float64 ground truth for softmax_topk: short and obviously right.
#pragma once

#include <cstdint>
#include <vector>

namespace reference {

// log(sum_j exp(row[j])) in float64, with the row's maximum subtracted
// first so that no term overflows. -inf entries contribute exp(-inf) = 0.
// Requires at least one finite entry.
double log_sum_exp(const float* row, int64_t vocab);

// softmax(row)[column] in float64, given the row's log_sum_exp.
double softmax_at(const float* row, int64_t column, double row_log_sum_exp);

// The k largest entries of softmax over each row, in non-increasing order;
// ties are broken by the lower column first (any order is a valid answer;
// this one is just deterministic).
//   logits  [rows, vocab]
//   probs   [rows, k] float64
//   indices [rows, k]
void softmax_topk(const float* logits, int64_t rows, int64_t vocab, int64_t k, double* probs, int32_t* indices);

}  // namespace reference
