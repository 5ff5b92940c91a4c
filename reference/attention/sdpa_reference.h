// Float64 ground truth for attention: one (batch, query head) pair at a
// time, materialising each row's scores. Short and obviously right; the
// checks widen the float32 inputs they generated.
#pragma once

#include <cstdint>

namespace reference {

struct SdpaShape {
  int64_t n_q = 0;
  int64_t n_kv = 0;
  int64_t dim = 0;
  double scale = 1;
  bool causal = false;
  // The queries given: `count` of them (-1: to the last) from query `first`,
  // so that parts of a head can be computed apart (the causal mask still
  // counts from query 0).
  int64_t first = 0;
  int64_t count = -1;
  int64_t rows() const { return count < 0 ? n_q - first : count; }
};

// a . b over n elements, in four partial sums (float64 to its rounding; a
// loop the compiler vectorises, which one running sum is not).
double sdpa_dot(const double* a, const double* b, int64_t n);

// How many keys query i sees: all n_kv, or with the causal mask aligned at
// the bottom right, keys 0 .. i + (n_kv - n_q) (none below 0).
int64_t sdpa_visible_keys(const SdpaShape& s, int64_t i);

// q [rows, dim], k and v [n_kv, dim]: o [rows, dim] and lse [rows]. A query
// that sees no key gets o = 0 and lse = -inf.
void sdpa_forward_head(const SdpaShape& s, const double* q, const double* k, const double* v, double* o, double* lse);

// The gradients of L with dL/do = dout [rows, dim]:
//   p = softmax(s) per row, dp = dout v^T, ds = p * (dp - rowsum(dout * o)),
//   dq = scale * ds k (written), dk += scale * ds^T q, dv += p^T dout
// dk and dv [n_kv, dim] are added to, so that the query heads of one kv
// head sum into it.
void sdpa_backward_head(const SdpaShape& s, const double* q, const double* k, const double* v, const double* dout,
                        double* dq, double* dk, double* dv);

}  // namespace reference
