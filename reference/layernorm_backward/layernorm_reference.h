// Float64 ground truth for layernorm_backward: short and obviously right.
// Inputs are float64 so that the tests can differentiate it numerically;
// the checker converts the float32 inputs it generated.
#pragma once

#include <cstdint>

namespace reference {

// Per row: mean, population variance, rstd = 1/sqrt(var + eps) (two passes).
//   x [rows, dim]; mean, rstd [rows]
void layernorm_statistics(const double* x, int64_t rows, int64_t dim, double eps, double* mean, double* rstd);

// y = gamma * (x - mean) * rstd + beta.
//   x, y [rows, dim]; gamma, beta [dim]
void layernorm_forward(const double* x, const double* gamma, const double* beta, int64_t rows, int64_t dim, double eps,
                       double* y);

// With xhat = (x - mean) * rstd and g = dy * gamma:
//   dx     = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat))   [rows, dim]
//   dgamma = sum_rows dy * xhat                                  [dim]
//   dbeta  = sum_rows dy                                         [dim]
// (the derivation is in challenges/layernorm_backward/README.md).
void layernorm_backward(const double* dy, const double* x, const double* gamma, int64_t rows, int64_t dim, double eps,
                        double* dx, double* dgamma, double* dbeta);

}  // namespace reference
