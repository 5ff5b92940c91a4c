// The project's one exception type and the macros that raise it: a broken
// invariant or a failed system call throws HarnessError through HARNESS_CHECK,
// HARNESS_FAIL or HARNESS_CHECK_ERRNO, whose message names the file, the line,
// the failed expression and the values. The runner turns an error during a
// case into a verdict and goes on; only main() picks an exit code.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace harness {

class HarnessError : public std::runtime_error {
 public:
  explicit HarnessError(const std::string& message) : std::runtime_error(message) {}
};

// Input that the user can fix (a bad option, a missing file, a malformed
// manifest): the CLI answers it with exit code 2 instead of a crash report.
class UsageError : public HarnessError {
 public:
  explicit UsageError(const std::string& message) : HarnessError(message) {}
};

// Data from a submission (a reply on its channel, a file it wrote, a file
// it replaced) that the harness cannot use. Whatever untrusted input can
// cause is the submission's fault: the runner records it as the verdict
// `error`, never as `harness_error`.
class UntrustedInputError : public HarnessError {
 public:
  explicit UntrustedInputError(const std::string& message) : HarnessError(message) {}
};

[[noreturn]] void throw_error(const char* file, int line, const char* expression, const std::string& message);
[[noreturn]] void throw_errno(const char* file, int line, const char* expression, const std::string& message);

}  // namespace harness

#define HARNESS_FAIL(...) ::harness::throw_error(__FILE__, __LINE__, nullptr, ::fmt::format(__VA_ARGS__))

#define HARNESS_CHECK(condition, ...)                                                     \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      ::harness::throw_error(__FILE__, __LINE__, #condition, ::fmt::format(__VA_ARGS__)); \
    }                                                                                     \
  } while (false)

// For POSIX calls that return -1 and set errno.
#define HARNESS_CHECK_ERRNO(call_result, ...)                                               \
  do {                                                                                      \
    if ((call_result) == -1) {                                                              \
      ::harness::throw_errno(__FILE__, __LINE__, #call_result, ::fmt::format(__VA_ARGS__)); \
    }                                                                                       \
  } while (false)
