#include "harness/runner/failure_verdict.h"

#include <fmt/format.h>

#include <algorithm>

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

void settle_verdict(CaseResult& result) {
  std::vector<Finding> found = result.other_failures;
  if (result.verdict != Verdict::pass) found.insert(found.begin(), Finding{result.verdict, result.message});
  if (found.empty()) return;
  std::stable_sort(found.begin(), found.end(),
                   [](const Finding& a, const Finding& b) { return gravity(a.verdict) > gravity(b.verdict); });
  result.verdict = found.front().verdict;
  result.message = found.front().message;
  result.other_failures.assign(found.begin() + 1, found.end());
}

}  // namespace harness
