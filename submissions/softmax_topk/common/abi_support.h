// ABI plumbing shared by the softmax_topk submissions of this repository.
//
// Not a submission (no submission.json here): a submission's shim includes it
// so that argument checks, the status codes and the error message behave the
// same in every one of them. The rules come from harness_abi.h: no exception
// crosses the C ABI, and softmax_topk_last_error() never returns NULL.
#ifndef SOFTMAX_TOPK_ABI_SUPPORT_H
#define SOFTMAX_TOPK_ABI_SUPPORT_H

#include <cstdint>
#include <limits>
#include <string>

#include "../../common/abi_errors.h"
#include "softmax_topk.h"

namespace softmax_topk_abi {

// The error plumbing every submission shares, under this challenge's name.
using submission_abi::fail;
using submission_abi::guarded;
using submission_abi::last_error;
using submission_abi::last_error_message;

// Rejects what the ABI forbids (INVALID_ARGUMENT) and shapes no implementation
// here can express: column indices are int32, so vocab must fit in one.
inline harness_status check_arguments(const float* logits, int64_t rows, int64_t vocab, int64_t k, const float* probs,
                                      const int32_t* indices) noexcept {
  if (logits == nullptr || probs == nullptr || indices == nullptr)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "softmax_topk_run: a buffer pointer is NULL");
  if (rows < 1 || vocab < 1 || k < 1 || k > vocab)
    return fail(HARNESS_STATUS_INVALID_ARGUMENT, "softmax_topk_run: need rows >= 1 and 1 <= k <= vocab");
  if (vocab > std::numeric_limits<int32_t>::max())
    return fail(HARNESS_STATUS_UNSUPPORTED, "softmax_topk_run: vocab does not fit in int32 indices");
  return HARNESS_STATUS_OK;
}

}  // namespace softmax_topk_abi

// Defines the three exported functions of softmax_topk.h around
// `implementation`, a function with softmax_topk_run's signature that may
// throw: arguments are checked first, and any exception becomes
// HARNESS_STATUS_ERROR with its message.
#define SOFTMAX_TOPK_EXPORT_ABI(implementation)                                                                \
  extern "C" int32_t softmax_topk_abi_version(void) { return SOFTMAX_TOPK_ABI_VERSION; }                       \
  extern "C" const char* softmax_topk_last_error(void) { return softmax_topk_abi::last_error(); }              \
  extern "C" harness_status softmax_topk_run(const float* logits, int64_t rows, int64_t vocab, int64_t k,      \
                                             float* probs, int32_t* indices, void* stream) {                   \
    return softmax_topk_abi::guarded([&] {                                                                     \
      const harness_status status = softmax_topk_abi::check_arguments(logits, rows, vocab, k, probs, indices); \
      if (status != HARNESS_STATUS_OK) return status;                                                          \
      return implementation(logits, rows, vocab, k, probs, indices, stream);                                   \
    });                                                                                                        \
  }

#endif  // SOFTMAX_TOPK_ABI_SUPPORT_H
