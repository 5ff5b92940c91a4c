#include "layernorm_backward/layernorm_reference.h"

#include <cmath>
#include <vector>

namespace reference {

void layernorm_statistics(const double* x, int64_t rows, int64_t dim, double eps, double* mean, double* rstd) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x + r * dim;
    double sum = 0;
    for (int64_t j = 0; j < dim; ++j) sum += row[j];
    const double m = sum / static_cast<double>(dim);
    double squares = 0;
    for (int64_t j = 0; j < dim; ++j) squares += (row[j] - m) * (row[j] - m);
    mean[r] = m;
    rstd[r] = 1.0 / std::sqrt(squares / static_cast<double>(dim) + eps);
  }
}

void layernorm_forward(const double* x, const double* gamma, const double* beta, int64_t rows, int64_t dim, double eps,
                       double* y) {
  std::vector<double> mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
  layernorm_statistics(x, rows, dim, eps, mean.data(), rstd.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < dim; ++j) {
      y[r * dim + j] = gamma[j] * (x[r * dim + j] - mean[r]) * rstd[r] + beta[j];
    }
  }
}

void layernorm_backward(const double* dy, const double* x, const double* gamma, int64_t rows, int64_t dim, double eps,
                        double* dx, double* dgamma, double* dbeta) {
  std::vector<double> mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
  layernorm_statistics(x, rows, dim, eps, mean.data(), rstd.data());
  for (int64_t j = 0; j < dim; ++j) dgamma[j] = dbeta[j] = 0;
  std::vector<double> xhat(static_cast<size_t>(dim)), g(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    double mean_g = 0, mean_g_xhat = 0;
    for (int64_t j = 0; j < dim; ++j) {
      const auto k = static_cast<size_t>(j);
      xhat[k] = (x[r * dim + j] - mean[r]) * rstd[r];
      g[k] = dy[r * dim + j] * gamma[j];
      mean_g += g[k];
      mean_g_xhat += g[k] * xhat[k];
      dgamma[j] += dy[r * dim + j] * xhat[k];
      dbeta[j] += dy[r * dim + j];
    }
    mean_g /= static_cast<double>(dim);
    mean_g_xhat /= static_cast<double>(dim);
    for (int64_t j = 0; j < dim; ++j) {
      const auto k = static_cast<size_t>(j);
      dx[r * dim + j] = rstd[r] * (g[k] - mean_g - xhat[k] * mean_g_xhat);
    }
  }
}

}  // namespace reference
