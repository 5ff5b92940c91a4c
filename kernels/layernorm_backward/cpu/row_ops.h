// One-row building blocks of the fast CPU layernorm (layernorm_cpu.cpp runs
// them over rows and threads). GCC/Clang vector extensions: -march=native
// lowers them to AVX-512, AVX2 or NEON. No -ffast-math is needed: every
// reduction keeps its own vector accumulators, so the compiler never has to
// reorder a sum by itself.
#ifndef LAYERNORM_BACKWARD_CPU_ROW_OPS_H
#define LAYERNORM_BACKWARD_CPU_ROW_OPS_H

#include <cmath>
#include <cstdint>
#include <cstring>

#include "layernorm_backward/row_stats.h"

namespace layernorm::cpu::detail {

constexpr int64_t kLanes = 16;
typedef float vfloat __attribute__((vector_size(kLanes * sizeof(float))));
typedef float vhalf __attribute__((vector_size(kLanes / 2 * sizeof(float))));
typedef double vdouble __attribute__((vector_size(kLanes / 2 * sizeof(double))));

// Rows start anywhere (row r at r * dim floats), so every access is unaligned.
inline vfloat load(const float* p) {
  vfloat v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Adds the 16 float lanes of v, widened to double, to lo (lanes 0-7) and hi.
inline void add_widened(vdouble& lo, vdouble& hi, vfloat v) {
  vhalf a, b;
  std::memcpy(&a, &v, sizeof(a));
  std::memcpy(&b, reinterpret_cast<const char*>(&v) + sizeof(a), sizeof(b));
  lo += __builtin_convertvector(a, vdouble);
  hi += __builtin_convertvector(b, vdouble);
}

// acc[0..15] += v, in double.
inline void accumulate_widened(double* acc, vfloat v) {
  vdouble lo, hi;
  std::memcpy(&lo, acc, sizeof(lo));
  std::memcpy(&hi, acc + kLanes / 2, sizeof(hi));
  add_widened(lo, hi, v);
  std::memcpy(acc, &lo, sizeof(lo));
  std::memcpy(acc + kLanes / 2, &hi, sizeof(hi));
}

inline double hsum(vdouble v) {
  double s = 0.0;
  for (int64_t l = 0; l < kLanes / 2; ++l) s += v[l];
  return s;
}

inline double hsum(vfloat v) {
  double s = 0.0;
  for (int64_t l = 0; l < kLanes; ++l) s += static_cast<double>(v[l]);
  return s;
}

// Mean and variance of row x[0, n), both passes on the row shifted by
// K = x[0] and summed in double (RowStats explains the shift). Double sums
// make 1e18-sized rows safe (their squares, 1e36, would overflow a float sum
// of a few hundred terms) and keep the variance exact enough for any dim.
// The second pass reads the row from cache: one row is at most a few
// hundred KiB.
inline RowStats row_statistics(const float* x, int64_t n, float eps) {
  const float k = x[0];
  vdouble a0 = {}, a1 = {}, a2 = {}, a3 = {};
  int64_t j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    add_widened(a0, a1, load(x + j) - k);
    add_widened(a2, a3, load(x + j + kLanes) - k);
  }
  double sum = hsum((a0 + a1) + (a2 + a3));
  for (; j < n; ++j) sum += static_cast<double>(x[j] - k);
  const float m = static_cast<float>(sum / static_cast<double>(n));

  // Centred on m (the float the backward will use), so that the variance is
  // that of exactly the xhat both passes compute.
  a0 = a1 = a2 = a3 = vdouble{};
  for (j = 0; j + kLanes <= n; j += kLanes) {
    const vfloat e = (load(x + j) - k) - m;
    vhalf lo, hi;
    std::memcpy(&lo, &e, sizeof(lo));
    std::memcpy(&hi, reinterpret_cast<const char*>(&e) + sizeof(lo), sizeof(hi));
    const vdouble dlo = __builtin_convertvector(lo, vdouble);
    const vdouble dhi = __builtin_convertvector(hi, vdouble);
    a0 += dlo * dlo;
    a1 += dhi * dhi;
  }
  double squares = hsum(a0 + a1);
  for (; j < n; ++j) {
    const double e = static_cast<double>((x[j] - k) - m);
    squares += e * e;
  }
  const double var = squares / static_cast<double>(n);
  return RowStats{m, static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)))};
}

// y = gamma * xhat + beta for one row.
inline void row_normalise(const float* __restrict x, const float* __restrict gamma, const float* __restrict beta,
                          int64_t n, RowStats s, float* __restrict y) {
  const float k = x[0];
  for (int64_t j = 0; j < n; ++j) y[j] = gamma[j] * (((x[j] - k) - s.shifted_mean) * s.rstd) + beta[j];
}

// dx of one row; adds dy * xhat to acc_dgamma[0, n) and dy to acc_dbeta.
// Pass 1 (from memory): xhat and g = dy * gamma, the row sums of g and
// g * xhat, and the column accumulators. Pass 2 (from cache) recomputes xhat
// and g rather than storing them: the same bytes either way.
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
inline void row_backward(const float* __restrict dy, const float* __restrict x, const float* __restrict gamma,
                         int64_t n, RowStats s, float* __restrict dx, double* __restrict acc_dgamma,
                         double* __restrict acc_dbeta) {
  const float k = x[0], m = s.shifted_mean, rstd = s.rstd;
  if (n == 1) {
    // xhat = 0 exactly, so dx = rstd * (g - mean(g)) = 0 exactly. Computed,
    // it would be the residue of g - mean(g): with FMA contraction, g's own
    // rounding error times rstd (~316), against a reference that is 0.
    acc_dgamma[0] += static_cast<double>(dy[0] * (((x[0] - k) - m) * rstd));
    acc_dbeta[0] += static_cast<double>(dy[0]);
    dx[0] = 0.0f;
    return;
  }
  vfloat sg0 = {}, sg1 = {}, sgx0 = {}, sgx1 = {};  // two of each: half the add chain
  const auto step = [&](int64_t at, vfloat& sg, vfloat& sgx) {
    const vfloat xh = ((load(x + at) - k) - m) * rstd;
    const vfloat d = load(dy + at);
    const vfloat g = d * load(gamma + at);
    sg += g;
    sgx += g * xh;
    accumulate_widened(acc_dgamma + at, d * xh);
    accumulate_widened(acc_dbeta + at, d);
  };
  int64_t j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    step(j, sg0, sgx0);
    step(j + kLanes, sg1, sgx1);
  }
  if (j + kLanes <= n) {
    step(j, sg0, sgx0);
    j += kLanes;
  }
  double sum_g = hsum(sg0 + sg1), sum_gx = hsum(sgx0 + sgx1);
  for (; j < n; ++j) {
    const float xh = ((x[j] - k) - m) * rstd;
    const float g = dy[j] * gamma[j];
    sum_g += static_cast<double>(g);
    sum_gx += static_cast<double>(g * xh);
    acc_dgamma[j] += static_cast<double>(dy[j] * xh);
    acc_dbeta[j] += static_cast<double>(dy[j]);
  }
  const float a = static_cast<float>(sum_g / static_cast<double>(n));
  const float b = static_cast<float>(sum_gx / static_cast<double>(n));
  for (j = 0; j < n; ++j) {
    const float xh = ((x[j] - k) - m) * rstd;
    dx[j] = rstd * ((dy[j] * gamma[j] - a) - xh * b);
  }
}

}  // namespace layernorm::cpu::detail

#endif  // LAYERNORM_BACKWARD_CPU_ROW_OPS_H
