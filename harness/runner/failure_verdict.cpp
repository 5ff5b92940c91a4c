#include "harness/runner/failure_verdict.h"

#include <fmt/format.h>

#include "harness/core/error.h"

namespace harness {

FailureVerdict verdict_of_failure(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const VerdictException& v) {
    return {v.verdict(), v.message()};
  } catch (const UntrustedInputError& e) {
    return {Verdict::error, fmt::format("the submission sent what the harness cannot use: {}", e.what())};
  } catch (const std::exception& e) {
    return {Verdict::harness_error, fmt::format("the harness failed on this case: {}", e.what())};
  } catch (...) {
    return {Verdict::harness_error, "the harness failed on this case with an exception of unknown type"};
  }
}

}  // namespace harness
