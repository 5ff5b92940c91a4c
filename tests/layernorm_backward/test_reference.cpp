// The float64 reference: hand-computed values, central finite differences of
// L = sum(dy * y), and an explicit Jacobian.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "harness/core/rng.h"
#include "layernorm_backward/layernorm_reference.h"

namespace {

TEST(LayerNormReference, ForwardByHand) {
  // x = 1..4: mean 2.5, population variance 1.25.
  const std::vector<double> x{1, 2, 3, 4}, gamma{2, 2, 2, 2}, beta{0.5, 0.5, 0.5, 0.5};
  std::vector<double> y(4);
  reference::layernorm_forward(x.data(), gamma.data(), beta.data(), 1, 4, 0.0, y.data());
  const double rstd = 1 / std::sqrt(1.25);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(y[static_cast<size_t>(j)], 2 * (j + 1 - 2.5) * rstd + 0.5, 1e-15);
  // A constant row: variance 0, eps alone sets rstd; y = beta.
  const std::vector<double> c{7, 7, 7, 7};
  reference::layernorm_forward(c.data(), gamma.data(), beta.data(), 1, 4, 1e-5, y.data());
  for (double v : y) EXPECT_DOUBLE_EQ(v, 0.5);
}

struct Problem {
  int64_t rows, dim;
  double eps;
  std::vector<double> x, gamma, beta, dy;
};

Problem random_problem(int64_t rows, int64_t dim, double offset, uint64_t seed) {
  harness::Rng rng(seed);
  Problem p{rows, dim, 1e-5, {}, {}, {}, {}};
  for (int64_t i = 0; i < rows * dim; ++i) p.x.push_back(rng.normal(offset, 1.0));
  for (int64_t i = 0; i < rows * dim; ++i) p.dy.push_back(rng.normal());
  for (int64_t j = 0; j < dim; ++j) p.gamma.push_back(rng.normal(1.0, 0.1));
  for (int64_t j = 0; j < dim; ++j) p.beta.push_back(rng.normal(0.0, 0.1));
  return p;
}

double loss(const Problem& p) {
  std::vector<double> y(p.x.size());
  reference::layernorm_forward(p.x.data(), p.gamma.data(), p.beta.data(), p.rows, p.dim, p.eps, y.data());
  double l = 0;
  for (size_t i = 0; i < y.size(); ++i) l += p.dy[i] * y[i];
  return l;
}

// Central difference of loss() with respect to values[i].
double numeric_derivative(Problem& p, std::vector<double>& values, size_t i) {
  const double h = 1e-6 * std::max(1.0, std::fabs(values[i]));
  const double saved = values[i];
  values[i] = saved + h;
  const double up = loss(p);
  values[i] = saved - h;
  const double down = loss(p);
  values[i] = saved;
  return (up - down) / (2 * h);
}

TEST(LayerNormReference, GradientsMatchCentralFiniteDifferences) {
  for (const auto& [rows, dim, offset] :
       {std::tuple<int64_t, int64_t, double>{3, 5, 0.0}, {2, 8, 3.0}, {4, 2, -1.0}, {1, 7, 0.0}}) {
    Problem p = random_problem(rows, dim, offset, 42 + static_cast<uint64_t>(dim));
    std::vector<double> dx(p.x.size()), dgamma(static_cast<size_t>(dim)), dbeta(static_cast<size_t>(dim));
    reference::layernorm_backward(p.dy.data(), p.x.data(), p.gamma.data(), rows, dim, p.eps, dx.data(), dgamma.data(),
                                  dbeta.data());
    // Truncation error h^2 ~ 1e-12 and rounding ~1e-16 / h ~ 1e-10: 1e-6 is safe
    // and still far below any mistake in the formula (e.g. a missing term is O(1)).
    for (size_t i = 0; i < p.x.size(); ++i) EXPECT_NEAR(dx[i], numeric_derivative(p, p.x, i), 1e-6) << "dx " << i;
    for (size_t j = 0; j < p.gamma.size(); ++j)
      EXPECT_NEAR(dgamma[j], numeric_derivative(p, p.gamma, j), 1e-6) << "dgamma " << j;
    for (size_t j = 0; j < p.beta.size(); ++j)
      EXPECT_NEAR(dbeta[j], numeric_derivative(p, p.beta, j), 1e-6) << "dbeta " << j;
  }
}

TEST(LayerNormReference, BackwardIsTheTransposedJacobianTimesDy) {
  // One row of 4: J[i][j] = dy_i/dx_j = gamma_i * rstd * (delta_ij - 1/D - xhat_i * xhat_j / D).
  Problem p = random_problem(1, 4, 0.5, 7);
  const int64_t d = 4;
  std::vector<double> mean(1), rstd(1);
  reference::layernorm_statistics(p.x.data(), 1, d, p.eps, mean.data(), rstd.data());
  std::vector<double> xhat(4);
  for (size_t i = 0; i < 4; ++i) xhat[i] = (p.x[i] - mean[0]) * rstd[0];
  std::vector<double> dx(4), dgamma(4), dbeta(4);
  reference::layernorm_backward(p.dy.data(), p.x.data(), p.gamma.data(), 1, d, p.eps, dx.data(), dgamma.data(),
                                dbeta.data());
  for (size_t j = 0; j < 4; ++j) {
    double expected = 0;
    for (size_t i = 0; i < 4; ++i) {
      const double jacobian = p.gamma[i] * rstd[0] * ((i == j ? 1.0 : 0.0) - 0.25 - xhat[i] * xhat[j] / 4);
      expected += jacobian * p.dy[i];
    }
    EXPECT_NEAR(dx[j], expected, 1e-12);
    EXPECT_NEAR(dgamma[j], p.dy[j] * xhat[j], 1e-15);
    EXPECT_DOUBLE_EQ(dbeta[j], p.dy[j]);
  }
}

}  // namespace
