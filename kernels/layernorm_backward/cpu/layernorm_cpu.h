// Fast CPU layer normalisation, forward and backward (design: README.md of
// kernels/layernorm_backward). Plain functions on raw host pointers, not tied
// to the harness ABI (submissions/layernorm_backward/cpu-fast wraps them).
#ifndef LAYERNORM_BACKWARD_CPU_H
#define LAYERNORM_BACKWARD_CPU_H

#include <cstdint>

#include "layernorm_backward/row_stats.h"

namespace layernorm::cpu {

// For every row r, with the population variance:
//   y[r, :] = gamma * (x[r, :] - mean_r) / sqrt(var_r + eps) + beta
// x     [rows, dim] float32, read only
// gamma [dim], beta [dim] float32, read only
// y     [rows, dim] float32, written
// saved [rows] RowStats, written: what backward() needs besides x
// Needs rows, dim >= 1 and eps >= 0 (eps = 0 with a constant row gives inf,
// as the formula does). Rows are spread over a persistent thread pool.
void forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps, float* y,
             RowStats* saved);

// Given dy = dL/dy for the forward of the same x and gamma:
// dx     [rows, dim] float32, written
// dgamma [dim] float32, written: sum over rows of dy * xhat
// dbeta  [dim] float32, written: sum over rows of dy
// saved  [rows] what forward() wrote for this x, read only
// dgamma and dbeta do not depend on the number of threads: rows are split
// into a number of tasks fixed by the shape, each task sums its rows in
// double, and the tasks' sums are added in task order.
// May throw std::bad_alloc (scratch for the tasks' sums, kept between calls).
void backward(const float* dy, const float* x, const float* gamma, const RowStats* saved, int64_t rows, int64_t dim,
              float* dx, float* dgamma, float* dbeta);

}  // namespace layernorm::cpu

#endif  // LAYERNORM_BACKWARD_CPU_H
