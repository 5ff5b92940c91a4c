// ABI plumbing shared by the attention submissions of this repository.
//
// Not a submission (no submission.json here): a submission's shim includes it
// so that argument checks, the status codes and the error message behave the
// same in every one of them. The rules come from harness_abi.h: no exception
// crosses the C ABI, and attention_last_error() never returns NULL.
#ifndef ATTENTION_ABI_SUPPORT_H
#define ATTENTION_ABI_SUPPORT_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "../../common/abi_errors.h"
#include "attention.h"

namespace attention_abi {

// The error plumbing every submission shares, under this challenge's name.
using submission_abi::fail;
using submission_abi::guarded;
using submission_abi::last_error;
using submission_abi::last_error_message;

// a * b * c * d floats addressable in bytes with int64 arithmetic (every
// factor >= 1).
inline bool addressable(int64_t a, int64_t b, int64_t c, int64_t d) noexcept {
  int64_t limit = std::numeric_limits<int64_t>::max() / 8;
  for (const int64_t factor : {a, b, c, d}) {
    if (factor > limit) return false;
    limit /= factor;
  }
  return true;
}

// Every size >= 1, whole groups of query heads, a finite scale, and the
// tensors addressable.
inline harness_status check_shape(const char* function, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q,
                                  int64_t n_kv, int64_t dim, float scale) noexcept {
  const auto refuse = [&](harness_status status, const char* why) {
    try {
      last_error_message() = std::string(function) + ": " + why;
    } catch (...) {
    }
    return status;
  };
  if (batch < 1 || heads_q < 1 || heads_kv < 1 || n_q < 1 || n_kv < 1 || dim < 1)
    return refuse(HARNESS_STATUS_INVALID_ARGUMENT, "need batch, heads_q, heads_kv, n_q, n_kv and dim >= 1");
  if (heads_q % heads_kv != 0) return refuse(HARNESS_STATUS_INVALID_ARGUMENT, "heads_q must be a multiple of heads_kv");
  if (!std::isfinite(scale)) return refuse(HARNESS_STATUS_INVALID_ARGUMENT, "scale must be finite");
  if (!addressable(batch, heads_q, n_q, dim) || !addressable(batch, heads_kv, n_kv, dim))
    return refuse(HARNESS_STATUS_UNSUPPORTED, "the tensors are too large to address");
  return HARNESS_STATUS_OK;
}

inline harness_status check_forward(const float* q, const float* k, const float* v, int64_t batch, int64_t heads_q,
                                    int64_t heads_kv, int64_t n_q, int64_t n_kv, int64_t dim, float scale,
                                    const float* o, const float* lse) noexcept {
  if (q == nullptr || k == nullptr || v == nullptr || o == nullptr || lse == nullptr)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "attention_forward: a buffer pointer is NULL");
  return check_shape("attention_forward", batch, heads_q, heads_kv, n_q, n_kv, dim, scale);
}

inline harness_status check_backward(const float* q, const float* k, const float* v, const float* o, const float* lse,
                                     const float* dout, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q,
                                     int64_t n_kv, int64_t dim, float scale, const float* dq, const float* dk,
                                     const float* dv) noexcept {
  if (q == nullptr || k == nullptr || v == nullptr || o == nullptr || lse == nullptr || dout == nullptr ||
      dq == nullptr || dk == nullptr || dv == nullptr)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "attention_backward: a buffer pointer is NULL");
  return check_shape("attention_backward", batch, heads_q, heads_kv, n_q, n_kv, dim, scale);
}

}  // namespace attention_abi

// Defines the four exported functions of attention.h around two functions
// with the exact parameter lists of attention_forward and attention_backward
// that may throw. Arguments are checked first; any exception becomes
// HARNESS_STATUS_ERROR with its message.
#define ATTENTION_EXPORT_ABI(forward, backward)                                                                       \
  extern "C" int32_t attention_abi_version(void) { return ATTENTION_ABI_VERSION; }                                    \
  extern "C" const char* attention_last_error(void) { return attention_abi::last_error(); }                           \
  extern "C" harness_status attention_forward(                                                                        \
      const float* q, const float* k, const float* v, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q,  \
      int64_t n_kv, int64_t dim, float scale, int32_t causal, float* o, float* lse, void* stream) {                   \
    return attention_abi::guarded([&] {                                                                               \
      const harness_status status =                                                                                   \
          attention_abi::check_forward(q, k, v, batch, heads_q, heads_kv, n_q, n_kv, dim, scale, o, lse);             \
      if (status != HARNESS_STATUS_OK) return status;                                                                 \
      return forward(q, k, v, batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal, o, lse, stream);               \
    });                                                                                                               \
  }                                                                                                                   \
  extern "C" harness_status attention_backward(const float* q, const float* k, const float* v, const float* o,        \
                                               const float* lse, const float* dout, int64_t batch, int64_t heads_q,   \
                                               int64_t heads_kv, int64_t n_q, int64_t n_kv, int64_t dim, float scale, \
                                               int32_t causal, float* dq, float* dk, float* dv, void* stream) {       \
    return attention_abi::guarded([&] {                                                                               \
      const harness_status status = attention_abi::check_backward(q, k, v, o, lse, dout, batch, heads_q, heads_kv,    \
                                                                  n_q, n_kv, dim, scale, dq, dk, dv);                 \
      if (status != HARNESS_STATUS_OK) return status;                                                                 \
      return backward(q, k, v, o, lse, dout, batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal, dq, dk, dv,     \
                      stream);                                                                                        \
    });                                                                                                               \
  }

#endif  // ATTENTION_ABI_SUPPORT_H
