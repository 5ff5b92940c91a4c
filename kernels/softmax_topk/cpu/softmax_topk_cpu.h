// Fast CPU softmax + top-k (see README.md beside this folder for the design).
#ifndef SOFTMAX_TOPK_CPU_H
#define SOFTMAX_TOPK_CPU_H

#include <cstdint>

namespace softmax_topk::cpu {

// For every row r: the k largest entries of softmax(logits[r, :]), in
// non-increasing order, with their column indices; ties broken by the lower
// column index (exactly the first k in the order value desc, column asc).
//
// logits  [rows, vocab] float32, row-major, any alignment; read only
// probs   [rows, k]     float32, row-major; written
// indices [rows, k]     int32,   row-major; written
//
// Needs rows >= 1, 1 <= k <= vocab <= INT32_MAX (any k: the top-k structure
// is sized at run time); throws std::invalid_argument otherwise. May throw
// std::bad_alloc for its scratch. Rows are spread over a persistent pool of
// hardware_concurrency() threads; the call returns when all are done.
// Entries may be -inf (masked); a row that is entirely -inf gives NaN probs,
// as softmax does.
void softmax_topk(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices);

}  // namespace softmax_topk::cpu

#endif  // SOFTMAX_TOPK_CPU_H
