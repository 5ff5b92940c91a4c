// Error plumbing shared by every C++/CUDA submission of this repository,
// whatever its challenge: the thread's last error message, statuses that
// carry one, and no exception across the C ABI (harness_abi.h).
//
// Not a submission (no submission.json here). Each challenge's
// submissions/<challenge>/common/abi_support.h includes it and adds the
// argument checks and exported functions of its own ABI.
#ifndef SUBMISSION_ABI_ERRORS_H
#define SUBMISSION_ABI_ERRORS_H

#include <exception>
#include <new>
#include <string>

#include "harness_abi.h"

namespace submission_abi {

// Message of the last status other than OK returned on this thread.
inline std::string& last_error_message() {
  thread_local std::string message;
  return message;
}

// Never NULL, as the ABI's <challenge>_last_error() must be.
inline const char* last_error() noexcept { return last_error_message().c_str(); }

inline harness_status fail(harness_status status, const char* message) noexcept {
  try {
    last_error_message() = message;
  } catch (...) {
    // Out of memory while copying the message: the status still tells the story.
  }
  return status;
}

inline harness_status fail(harness_status status, const std::string& message) noexcept {
  return fail(status, message.c_str());
}

// Runs `body` (returning a harness_status) and turns any exception into
// HARNESS_STATUS_ERROR with its message.
template <class Body>
harness_status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(HARNESS_STATUS_ERROR, "out of host memory");
  } catch (const std::exception& e) {
    return fail(HARNESS_STATUS_ERROR, e.what());
  } catch (...) {
    return fail(HARNESS_STATUS_ERROR, "unknown exception");
  }
}

}  // namespace submission_abi

#endif  // SUBMISSION_ABI_ERRORS_H
