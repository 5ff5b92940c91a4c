// Naive CPU layer normalisation: the baseline the fast kernels are measured
// against. What the maths says, one step at a time, on one thread:
//   forward:  per row, the mean, then the variance around it (two passes),
//             rstd; xhat is computed once and kept in the saved state, and
//             y = gamma * xhat + beta;
//   backward: dbeta and dgamma summed over the rows (row by row, so that
//             memory is read in order; each column's sum still adds its rows
//             in order), then per row the two means of the dx formula, then
//             dx.
// The saved state holds the whole xhat tensor: [rows, dim] floats of xhat,
// then [rows] floats of rstd. That is the memory cost the challenge scores.
//
// Products and outputs are float; the sums, the mean and x - mean are
// double. Why the mean: a float mean is off by up to ulp(mean)/2, and on a
// row whose variance is at or below eps, rstd (up to 1/sqrt(eps) ~ 316)
// multiplies that error into xhat (measured with a float mean: y fails the
// (1000, 2) case by 1.5x its tolerance on 2 seeds of 12, through rows whose
// two elements nearly coincide). With xhat kept, the backward never needs
// the mean again.
#include <cmath>
#include <vector>

#include "abi_support.h"

namespace {

int64_t saved_bytes(int64_t rows, int64_t dim) { return static_cast<int64_t>(sizeof(float)) * (rows * dim + rows); }

harness_status forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps,
                       float* y, void* saved, void* /*stream*/) {
  float* xhat = static_cast<float*>(saved);  // [rows, dim]
  float* rstd = xhat + rows * dim;           // [rows]
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double sum = 0.0;
    for (int64_t j = 0; j < dim; ++j) sum += xr[j];
    const double mean = sum / static_cast<double>(dim);
    double squares = 0.0;
    for (int64_t j = 0; j < dim; ++j) squares += (xr[j] - mean) * (xr[j] - mean);
    const float var = static_cast<float>(squares / static_cast<double>(dim));
    rstd[r] = 1.0f / std::sqrt(var + eps);
    for (int64_t j = 0; j < dim; ++j) {
      xhat[r * dim + j] = static_cast<float>((xr[j] - mean) * rstd[r]);
      y[r * dim + j] = gamma[j] * xhat[r * dim + j] + beta[j];
    }
  }
  return HARNESS_STATUS_OK;
}

harness_status backward(const float* dy, const float* /*x*/, const float* gamma, const void* saved, int64_t rows,
                        int64_t dim, float /*eps*/, float* dx, float* dgamma, float* dbeta, void* /*stream*/) {
  const float* xhat = static_cast<const float*>(saved);
  const float* rstd = xhat + rows * dim;
  std::vector<double> column_g(static_cast<size_t>(dim)), column_b(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < dim; ++j) {
      column_g[j] += static_cast<double>(dy[r * dim + j]) * xhat[r * dim + j];
      column_b[j] += dy[r * dim + j];
    }
  }
  for (int64_t j = 0; j < dim; ++j) {
    dgamma[j] = static_cast<float>(column_g[j]);
    dbeta[j] = static_cast<float>(column_b[j]);
  }
  std::vector<float> g(static_cast<size_t>(dim));  // dL/dxhat of one row
  for (int64_t r = 0; r < rows; ++r) {
    double sum_g = 0.0, sum_gx = 0.0;
    for (int64_t j = 0; j < dim; ++j) {
      g[j] = dy[r * dim + j] * gamma[j];
      sum_g += g[j];
      sum_gx += static_cast<double>(g[j]) * xhat[r * dim + j];
    }
    const float mean_g = static_cast<float>(sum_g / static_cast<double>(dim));
    const float mean_gx = static_cast<float>(sum_gx / static_cast<double>(dim));
    for (int64_t j = 0; j < dim; ++j) dx[r * dim + j] = rstd[r] * (g[j] - mean_g - xhat[r * dim + j] * mean_gx);
  }
  return HARNESS_STATUS_OK;
}

}  // namespace

LAYERNORM_EXPORT_ABI(saved_bytes, forward, backward)
