// What an exception that ended a case costs, and whom: the one place that
// decides between the submission's verdicts and `harness_error`.
#pragma once

#include <exception>
#include <string>

#include "harness/definitions/verdict.h"
#include "harness/results/results.h"

namespace harness {

struct FailureVerdict {
  Verdict verdict = Verdict::harness_error;
  std::string message;
};

// A VerdictException is its own verdict; an UntrustedInputError (a reply,
// a file or a folder from the submission that the harness cannot use) is
// the submission's `error`; anything else is the harness's own fault.
FailureVerdict verdict_of_failure(const std::exception_ptr& failure);

// A case's verdict once it ended: the gravest of what stopped it and what it
// found on the way (CaseContext::note_failure); the rest, gravest first, in
// other_failures.
void settle_verdict(CaseResult& result);

}  // namespace harness
