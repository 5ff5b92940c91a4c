// Naive CPU attention: the baseline the fast kernels are measured against.
// The textbook formulas, one (batch, query head) at a time, on one thread,
// with the whole n_q x n_kv probability matrix in memory:
//   forward:  S = scale q k^T (hidden keys -inf), P = softmax(S) row by row
//             (row max subtracted), o = P v, lse = max + log(sum);
//   backward: P again from q and k, then per query row D = rowsum(dout * o),
//             dP = dout v^T, dS = P * (dP - D), dq = scale dS k,
//             dk += scale dS^T q, dv += P^T dout, dk and dv summed over the
//             query heads of each kv head.
// Everything is float; the matrix (n_q * n_kv floats) is the memory cost the
// challenge scores.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "abi_support.h"

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

struct Dims {
  int64_t heads_q, heads_kv, n_q, n_kv, dim;
  float scale;
  bool causal;
  // Keys 0 .. visible(i) - 1 are those query i sees (bottom-right causal mask).
  int64_t visible(int64_t i) const { return causal ? std::clamp<int64_t>(i + n_kv - n_q + 1, 0, n_kv) : n_kv; }
};

float dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t d = 0; d < n; ++d) sum += a[d] * b[d];
  return sum;
}

std::vector<float> matrix_for(int64_t n_q, int64_t n_kv) {
  if (n_q > std::numeric_limits<int64_t>::max() / n_kv) throw std::length_error("n_q * n_kv scores do not fit");
  return std::vector<float>(static_cast<size_t>(n_q * n_kv));
}

// P [n_q, n_kv] = softmax(scale q k^T) of one head, 0 where a key is hidden;
// lse [n_q] (when not null) the rows' log-sum-exp, -inf for a row that sees
// no key (its P row is all 0).
void probabilities(const Dims& s, const float* q, const float* k, float* p, float* lse) {
  for (int64_t i = 0; i < s.n_q; ++i) {
    float* row = p + i * s.n_kv;
    std::fill(row, row + s.n_kv, 0.0f);
    const int64_t visible = s.visible(i);
    float max = kMinusInf;
    for (int64_t j = 0; j < visible; ++j) {
      row[j] = s.scale * dot(q + i * s.dim, k + j * s.dim, s.dim);
      max = std::max(max, row[j]);
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < visible; ++j) sum += row[j] = std::exp(row[j] - max);
    for (int64_t j = 0; j < visible; ++j) row[j] /= sum;
    if (lse != nullptr) lse[i] = visible == 0 ? kMinusInf : max + std::log(sum);
  }
}

harness_status forward(const float* q, const float* k, const float* v, int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t n_q, int64_t n_kv, int64_t dim, float scale, int32_t causal, float* o, float* lse,
                       void* /*stream*/) {
  const Dims s{heads_q, heads_kv, n_q, n_kv, dim, scale, causal != 0};
  std::vector<float> p = matrix_for(n_q, n_kv);
  for (int64_t bh = 0; bh < batch * heads_q; ++bh) {
    const int64_t kv = (bh / heads_q) * heads_kv + bh % heads_q / (heads_q / heads_kv);
    const float* kh = k + kv * n_kv * dim;
    const float* vh = v + kv * n_kv * dim;
    probabilities(s, q + bh * n_q * dim, kh, p.data(), lse + bh * n_q);
    for (int64_t i = 0; i < n_q; ++i) {
      float* out = o + (bh * n_q + i) * dim;
      std::fill(out, out + dim, 0.0f);
      for (int64_t j = 0; j < n_kv; ++j)
        for (int64_t d = 0; d < dim; ++d) out[d] += p[i * n_kv + j] * vh[j * dim + d];
    }
  }
  return HARNESS_STATUS_OK;
}

harness_status backward(const float* q, const float* k, const float* v, const float* o, const float* /*lse*/,
                        const float* dout, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv,
                        int64_t dim, float scale, int32_t causal, float* dq, float* dk, float* dv, void* /*stream*/) {
  const Dims s{heads_q, heads_kv, n_q, n_kv, dim, scale, causal != 0};
  std::vector<float> p = matrix_for(n_q, n_kv);
  std::fill(dk, dk + batch * heads_kv * n_kv * dim, 0.0f);
  std::fill(dv, dv + batch * heads_kv * n_kv * dim, 0.0f);
  for (int64_t bh = 0; bh < batch * heads_q; ++bh) {
    const int64_t kv = (bh / heads_q) * heads_kv + bh % heads_q / (heads_q / heads_kv);
    const float* kh = k + kv * n_kv * dim;
    const float* vh = v + kv * n_kv * dim;
    float* dkh = dk + kv * n_kv * dim;
    float* dvh = dv + kv * n_kv * dim;
    probabilities(s, q + bh * n_q * dim, kh, p.data(), nullptr);
    for (int64_t i = 0; i < n_q; ++i) {
      const float* qi = q + (bh * n_q + i) * dim;
      const float* gi = dout + (bh * n_q + i) * dim;
      float* dqi = dq + (bh * n_q + i) * dim;
      std::fill(dqi, dqi + dim, 0.0f);
      const float row_term = dot(gi, o + (bh * n_q + i) * dim, dim);
      for (int64_t j = 0; j < s.visible(i); ++j) {
        const float pij = p[i * n_kv + j];
        const float ds = pij * (dot(gi, vh + j * dim, dim) - row_term);
        for (int64_t d = 0; d < dim; ++d) {
          dqi[d] += scale * ds * kh[j * dim + d];
          dkh[j * dim + d] += scale * ds * qi[d];
          dvh[j * dim + d] += pij * gi[d];
        }
      }
    }
  }
  return HARNESS_STATUS_OK;
}

}  // namespace

ATTENTION_EXPORT_ABI(forward, backward)
