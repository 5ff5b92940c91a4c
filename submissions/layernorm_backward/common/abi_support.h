// ABI plumbing shared by the layernorm_backward submissions of this
// repository.
//
// Not a submission (no submission.json here): a submission's shim includes it
// so that argument checks, the status codes and the error message behave the
// same in every one of them. The rules come from harness_abi.h: no exception
// crosses the C ABI, and layernorm_last_error() never returns NULL.
#ifndef LAYERNORM_ABI_SUPPORT_H
#define LAYERNORM_ABI_SUPPORT_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "../../common/abi_errors.h"
#include "layernorm_backward.h"

namespace layernorm_abi {

// The error plumbing every submission shares, under this challenge's name.
using submission_abi::fail;
using submission_abi::guarded;
using submission_abi::last_error;
using submission_abi::last_error_message;

// rows, dim >= 1, and rows * dim floats addressable with int64 arithmetic.
inline harness_status check_shape(const char* function, int64_t rows, int64_t dim) noexcept {
  if (rows < 1 || dim < 1) {
    try {
      last_error_message() = std::string(function) + ": need rows >= 1 and dim >= 1";
    } catch (...) {
    }
    return HARNESS_STATUS_INVALID_ARGUMENT;
  }
  if (rows > std::numeric_limits<int64_t>::max() / 8 / dim)
    return fail(HARNESS_STATUS_UNSUPPORTED, "rows * dim is too large to address");
  return HARNESS_STATUS_OK;
}

inline harness_status check_forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim,
                                    float eps, const float* y, const void* saved) noexcept {
  if (x == nullptr || gamma == nullptr || beta == nullptr || y == nullptr || saved == nullptr)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "layernorm_forward: a buffer pointer is NULL");
  if (!(eps >= 0.0f) || std::isinf(eps))
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "layernorm_forward: eps must be finite and >= 0");
  return check_shape("layernorm_forward", rows, dim);
}

inline harness_status check_backward(const float* dy, const float* x, const float* gamma, const void* saved,
                                     int64_t rows, int64_t dim, const float* dx, const float* dgamma,
                                     const float* dbeta) noexcept {
  if (dy == nullptr || x == nullptr || gamma == nullptr || saved == nullptr || dx == nullptr || dgamma == nullptr ||
      dbeta == nullptr)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "layernorm_backward: a buffer pointer is NULL");
  return check_shape("layernorm_backward", rows, dim);
}

}  // namespace layernorm_abi

// Defines the five exported functions of layernorm_backward.h around three
// functions that may throw, with the signatures
//   int64_t saved_bytes(int64_t rows, int64_t dim);
//   harness_status forward(<layernorm_forward's parameters>);
//   harness_status backward(<layernorm_backward's parameters>);
// Arguments are checked first; any exception becomes HARNESS_STATUS_ERROR
// with its message.
#define LAYERNORM_EXPORT_ABI(saved_bytes, forward, backward)                                                           \
  extern "C" int32_t layernorm_abi_version(void) { return LAYERNORM_ABI_VERSION; }                                     \
  extern "C" const char* layernorm_last_error(void) { return layernorm_abi::last_error(); }                            \
  extern "C" harness_status layernorm_saved_state_bytes(int64_t rows, int64_t dim, int64_t* bytes) {                   \
    return layernorm_abi::guarded([&] {                                                                                \
      if (bytes == nullptr)                                                                                            \
        return layernorm_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "layernorm_saved_state_bytes: NULL");              \
      const harness_status status = layernorm_abi::check_shape("layernorm_saved_state_bytes", rows, dim);              \
      if (status != HARNESS_STATUS_OK) return status;                                                                  \
      *bytes = saved_bytes(rows, dim);                                                                                 \
      return static_cast<harness_status>(HARNESS_STATUS_OK);                                                           \
    });                                                                                                                \
  }                                                                                                                    \
  extern "C" harness_status layernorm_forward(const float* x, const float* gamma, const float* beta, int64_t rows,     \
                                              int64_t dim, float eps, float* y, void* saved, void* stream) {           \
    return layernorm_abi::guarded([&] {                                                                                \
      const harness_status status = layernorm_abi::check_forward(x, gamma, beta, rows, dim, eps, y, saved);            \
      if (status != HARNESS_STATUS_OK) return status;                                                                  \
      return forward(x, gamma, beta, rows, dim, eps, y, saved, stream);                                                \
    });                                                                                                                \
  }                                                                                                                    \
  extern "C" harness_status layernorm_backward(const float* dy, const float* x, const float* gamma, const void* saved, \
                                               int64_t rows, int64_t dim, float eps, float* dx, float* dgamma,         \
                                               float* dbeta, void* stream) {                                           \
    return layernorm_abi::guarded([&] {                                                                                \
      const harness_status status = layernorm_abi::check_backward(dy, x, gamma, saved, rows, dim, dx, dgamma, dbeta);  \
      if (status != HARNESS_STATUS_OK) return status;                                                                  \
      return backward(dy, x, gamma, saved, rows, dim, eps, dx, dgamma, dbeta, stream);                                 \
    });                                                                                                                \
  }

#endif  // LAYERNORM_ABI_SUPPORT_H
