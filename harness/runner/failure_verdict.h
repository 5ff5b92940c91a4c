// What an exception that ended a case costs, and whom: the one place that
// decides between the submission's verdicts and `harness_error`.
#pragma once

#include <exception>
#include <string>

#include "harness/definitions/verdict.h"

namespace harness {

struct FailureVerdict {
  Verdict verdict = Verdict::harness_error;
  std::string message;
};

// A VerdictException is its own verdict; an UntrustedInputError (a reply,
// a file or a folder from the submission that the harness cannot use) is
// the submission's `error`; anything else is the harness's own fault.
FailureVerdict verdict_of_failure(const std::exception_ptr& failure);

}  // namespace harness
