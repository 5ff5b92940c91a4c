#include "sdpa_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace reference {

namespace {

// Row i's probabilities over its visible keys; returns its logsumexp.
double row_probabilities(const SdpaShape& s, const double* q_row, const double* k, int64_t visible,
                         std::vector<double>& p) {
  p.assign(static_cast<size_t>(visible), 0.0);
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < visible; ++j) {
    p[static_cast<size_t>(j)] = s.scale * sdpa_dot(q_row, k + j * s.dim, s.dim);
    max = std::max(max, p[static_cast<size_t>(j)]);
  }
  double sum = 0;
  for (double& x : p) sum += (x = std::exp(x - max));
  for (double& x : p) x /= sum;
  return max + std::log(sum);
}

}  // namespace

double sdpa_dot(const double* a, const double* b, int64_t n) {
  double sum[4] = {0, 0, 0, 0};
  int64_t d = 0;
  for (; d + 4 <= n; d += 4) {
    for (int u = 0; u < 4; ++u) sum[u] += a[d + u] * b[d + u];
  }
  for (; d < n; ++d) sum[0] += a[d] * b[d];
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

int64_t sdpa_visible_keys(const SdpaShape& s, int64_t i) {
  if (!s.causal) return s.n_kv;
  return std::clamp<int64_t>(i + (s.n_kv - s.n_q) + 1, 0, s.n_kv);
}

void sdpa_forward_head(const SdpaShape& s, const double* q, const double* k, const double* v, double* o, double* lse) {
  std::vector<double> p;
  for (int64_t i = 0; i < s.rows(); ++i) {
    double* o_row = o + i * s.dim;
    std::fill(o_row, o_row + s.dim, 0.0);
    const int64_t visible = sdpa_visible_keys(s, s.first + i);
    if (visible == 0) {
      lse[i] = -std::numeric_limits<double>::infinity();
      continue;
    }
    lse[i] = row_probabilities(s, q + i * s.dim, k, visible, p);
    for (int64_t j = 0; j < visible; ++j) {
      for (int64_t d = 0; d < s.dim; ++d) o_row[d] += p[static_cast<size_t>(j)] * v[j * s.dim + d];
    }
  }
}

void sdpa_backward_head(const SdpaShape& s, const double* q, const double* k, const double* v, const double* dout,
                        double* dq, double* dk, double* dv) {
  std::vector<double> p, o(static_cast<size_t>(s.dim));
  for (int64_t i = 0; i < s.rows(); ++i) {
    const double* q_row = q + i * s.dim;
    const double* dout_row = dout + i * s.dim;
    double* dq_row = dq + i * s.dim;
    std::fill(dq_row, dq_row + s.dim, 0.0);
    const int64_t visible = sdpa_visible_keys(s, s.first + i);
    if (visible == 0) continue;
    row_probabilities(s, q_row, k, visible, p);
    std::fill(o.begin(), o.end(), 0.0);
    for (int64_t j = 0; j < visible; ++j) {
      for (int64_t d = 0; d < s.dim; ++d) o[static_cast<size_t>(d)] += p[static_cast<size_t>(j)] * v[j * s.dim + d];
    }
    const double row_term = sdpa_dot(dout_row, o.data(), s.dim);
    for (int64_t j = 0; j < visible; ++j) {
      const double pj = p[static_cast<size_t>(j)];
      const double ds = pj * (sdpa_dot(dout_row, v + j * s.dim, s.dim) - row_term);
      for (int64_t d = 0; d < s.dim; ++d) {
        dq_row[d] += s.scale * ds * k[j * s.dim + d];
        dk[j * s.dim + d] += s.scale * ds * q_row[d];
        dv[j * s.dim + d] += pj * dout_row[d];
      }
    }
  }
}

}  // namespace reference
