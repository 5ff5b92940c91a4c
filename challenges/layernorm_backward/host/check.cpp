#include "check.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/parallel.h"
#include "layernorm_backward/layernorm_reference.h"

namespace layernorm {

namespace {

// Rows are checked in fixed blocks, in parallel: each block's inputs are
// widened to float64 on the spot, so the check holds one float64 copy of the
// output (the reference) and not of every input.
constexpr int64_t kBlockRows = 64;

size_t block_count(const LnCase& c) { return static_cast<size_t>((c.rows + kBlockRows - 1) / kBlockRows); }

// body(block, first_row, row_count, x64 rows, second64 rows) with the block's
// rows of x and of `second` (dy, or nullptr) in float64.
template <typename Body>
void per_row_block(const LnCase& c, const float* x, const float* second, Body body) {
  harness::parallel_for(block_count(c), [&](size_t begin, size_t end) {
    std::vector<double> x64, second64;
    for (size_t b = begin; b < end; ++b) {
      const auto first = static_cast<int64_t>(b) * kBlockRows;
      const int64_t count = std::min(kBlockRows, c.rows - first);
      const float* x_rows = x + first * c.dim;
      x64.assign(x_rows, x_rows + count * c.dim);
      if (second != nullptr) second64.assign(second + first * c.dim, second + (first + count) * c.dim);
      body(b, first, count, x64.data(), second64.data());
    }
  });
}

std::vector<double> widen(const float* values, size_t n) { return std::vector<double>(values, values + n); }

// Any float32 layer norm sums each row in float32 to get its mean, off by
// about eps32 * |mean| * sqrt(D) summed in order (pairwise does better), and
// x - mean then moves every xhat of the row by eps32 * kappa, kappa = |mean| *
// rstd * sqrt(D), however carefully the rest is done. To first order that moves
// y by gamma * eps32 * kappa, dgamma by the sum over rows of dy * eps32 * kappa,
// and dx (whose g - mean(g) does not see it) by rstd * eps32 * kappa *
// (mean(g * xhat) + xhat * mean(g)); README.md, "Tolerances, and why".
double row_kappa(const LnCase& c, double mean, double rstd) {
  return std::fabs(mean) * rstd * std::sqrt(static_cast<double>(c.dim));
}

// Compares one tensor and folds it into the report.
void compare(harness::CheckReport& report, const std::string& name, const float* got,
             const std::vector<double>& reference, const std::vector<int64_t>& shape, const Tolerances& tolerances,
             const harness::ErrorScale* scale = nullptr, const harness::Conditioning* conditioning = nullptr) {
  harness::compare_into(report, name, got, reference.data(), reference.size(), shape, tolerances.at(name), scale,
                        conditioning);
}

}  // namespace

harness::CheckReport check_forward(const LnCase& c, const float* x, const float* gamma, const float* beta,
                                   const float* y, const Tolerances& tolerances) {
  const std::vector<double> gamma64 = widen(gamma, static_cast<size_t>(c.dim)),
                            beta64 = widen(beta, static_cast<size_t>(c.dim));
  std::vector<double> y_ref(static_cast<size_t>(c.rows * c.dim));
  std::vector<double> block_kappa(block_count(c), 0.0);
  per_row_block(c, x, nullptr, [&](size_t b, int64_t first, int64_t count, const double* x64, const double*) {
    reference::layernorm_forward(x64, gamma64.data(), beta64.data(), count, c.dim, c.eps, y_ref.data() + first * c.dim);
    double mean[kBlockRows], rstd[kBlockRows];
    reference::layernorm_statistics(x64, count, c.dim, c.eps, mean, rstd);
    for (int64_t r = 0; r < count; ++r) block_kappa[b] = std::max(block_kappa[b], row_kappa(c, mean[r], rstd[r]));
  });
  double gamma_max = 0;
  for (double g : gamma64) gamma_max = std::max(gamma_max, std::fabs(g));
  const double kappa = block_kappa.empty() ? 0.0 : *std::max_element(block_kappa.begin(), block_kappa.end());
  const harness::Conditioning y_conditioning{kappa * gamma_max, "max|gamma| * max(|mean| * rstd) * sqrt(D)"};
  harness::CheckReport report;
  compare(report, "y", y, y_ref, {c.rows, c.dim}, tolerances, nullptr, &y_conditioning);
  return report;
}

harness::CheckReport check_backward(const LnCase& c, const float* dy, const float* x, const float* gamma,
                                    const float* dx, const float* dgamma, const float* dbeta,
                                    const Tolerances& tolerances) {
  const auto dim = static_cast<size_t>(c.dim);
  const std::vector<double> gamma64 = widen(gamma, dim);
  std::vector<double> dx_ref(static_cast<size_t>(c.rows * c.dim)), dgamma_ref(dim, 0.0), dbeta_ref(dim, 0.0);
  // Each block's dgamma and dbeta partials add up in float64 in block order,
  // so the reference does not depend on the number of threads.
  const size_t blocks = block_count(c);
  std::vector<std::vector<double>> dgamma_parts(blocks, std::vector<double>(dim)),
      dbeta_parts(blocks, std::vector<double>(dim));
  // dx is g minus two means, times rstd: where those nearly cancel (dim 2,
  // whose xhat is +-1 up to eps) dx is far smaller than the terms, and a
  // float32 backward is off by a rounding of the terms. So dx's scale is
  // the largest term, max rstd * |g|, when that exceeds max |dx|.
  std::vector<double> term_scale(blocks, 0.0);
  std::vector<double> dx_sensitivity(blocks, 0.0);
  // Per block, per column: sum over rows of |dy| * kappa, what rounded means
  // can add to dgamma.
  std::vector<std::vector<double>> dgamma_spread(blocks, std::vector<double>(dim, 0.0));
  per_row_block(c, x, dy, [&](size_t b, int64_t first, int64_t count, const double* x64, const double* dy64) {
    reference::layernorm_backward(dy64, x64, gamma64.data(), count, c.dim, c.eps, dx_ref.data() + first * c.dim,
                                  dgamma_parts[b].data(), dbeta_parts[b].data());
    double mean[kBlockRows], rstd[kBlockRows];
    reference::layernorm_statistics(x64, count, c.dim, c.eps, mean, rstd);
    for (int64_t r = 0; r < count; ++r) {
      const double* dy_row = dy64 + r * c.dim;
      const double* x_row = x64 + r * c.dim;
      const double kappa = row_kappa(c, mean[r], rstd[r]);
      double g_sum = 0, g_xhat_sum = 0, xhat_max = 0;
      for (int64_t j = 0; j < c.dim; ++j) {
        const double g = dy_row[j] * gamma64[static_cast<size_t>(j)];
        const double xhat = (x_row[j] - mean[r]) * rstd[r];
        term_scale[b] = std::max(term_scale[b], rstd[r] * std::fabs(g));
        dgamma_spread[b][static_cast<size_t>(j)] += std::fabs(dy_row[j]) * kappa;
        g_sum += g;
        g_xhat_sum += g * xhat;
        xhat_max = std::max(xhat_max, std::fabs(xhat));
      }
      const double n = static_cast<double>(c.dim);
      dx_sensitivity[b] =
          std::max(dx_sensitivity[b], rstd[r] * kappa * (std::fabs(g_xhat_sum / n) + xhat_max * std::fabs(g_sum / n)));
    }
  });
  for (size_t b = 0; b < blocks; ++b) {
    for (size_t j = 0; j < dim; ++j) {
      dgamma_ref[j] += dgamma_parts[b][j];
      dbeta_ref[j] += dbeta_parts[b][j];
    }
  }
  const double largest_term = term_scale.empty() ? 0.0 : *std::max_element(term_scale.begin(), term_scale.end());
  const harness::ErrorScale dx_scale{largest_term, "max rstd*|dy*gamma|"};
  const harness::Conditioning dx_conditioning{
      dx_sensitivity.empty() ? 0.0 : *std::max_element(dx_sensitivity.begin(), dx_sensitivity.end()),
      "max rstd * |mean| * rstd * sqrt(D) * (|mean(g*xhat)| + max|xhat| * |mean(g)|)"};
  double spread = 0;
  for (size_t j = 0; j < dim; ++j) {
    double column = 0;
    for (size_t b = 0; b < blocks; ++b) column += dgamma_spread[b][j];
    spread = std::max(spread, column);
  }
  const harness::Conditioning dgamma_conditioning{spread,
                                                  "max over columns of sum over rows |dy| * |mean| * rstd * sqrt(D)"};
  harness::CheckReport report;
  compare(report, "dx", dx, dx_ref, {c.rows, c.dim}, tolerances, &dx_scale, &dx_conditioning);
  compare(report, "dgamma", dgamma, dgamma_ref, {c.dim}, tolerances, nullptr, &dgamma_conditioning);
  compare(report, "dbeta", dbeta, dbeta_ref, {c.dim}, tolerances);
  return report;
}

harness::CheckReport check_dx_row(const LnCase& c, const float* dy, const float* x, const float* gamma, const float* dx,
                                  const Tolerances& tolerances) {
  HARNESS_CHECK(c.rows == 1, "check_dx_row of {} rows", c.rows);
  const auto dim = static_cast<size_t>(c.dim);
  const std::vector<double> dy64 = widen(dy, dim), x64 = widen(x, dim), gamma64 = widen(gamma, dim);
  std::vector<double> dx64(dim), dgamma64(dim, 0.0), dbeta64(dim, 0.0);
  reference::layernorm_backward(dy64.data(), x64.data(), gamma64.data(), 1, c.dim, c.eps, dx64.data(), dgamma64.data(),
                                dbeta64.data());
  const std::vector<float> dgamma(dgamma64.begin(), dgamma64.end()), dbeta(dbeta64.begin(), dbeta64.end());
  return check_backward(c, dy, x, gamma, dx, dgamma.data(), dbeta.data(), tolerances);
}

}  // namespace layernorm
