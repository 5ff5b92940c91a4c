// What the harness concluded about one case of one submission.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

enum class Verdict {
  pass,
  wrong_answer,           // the checker rejected the values
  unwritten_output,       // poison left in an output
  out_of_bounds_write,    // a guard band around a buffer changed, or a sanitizer saw a write out of bounds
  invalid_memory_access,  // a sanitizer saw another invalid access (a read out of bounds, a misaligned one)
  data_race,              // a sanitizer saw a race between the threads of a kernel
  input_modified,         // an input differs from its pristine copy
  stale_output,           // a second call returned the previous call's answer
  impossible_speed,       // faster than the byte model allows at the measured peak
  forged_timing,          // the worker's timings are contradicted by the harness's own clock
  understated_memory,     // the memory it reports is far below what the harness saw it hold
  sandbox_violation,      // it attempted what the sandbox forbids (a denied system call)
  memory_limit,           // it exceeded the memory limit of its worker
  crash,                  // the worker died (signal, abort, sticky CUDA error)
  timeout,                // no answer within the per-call time limit
  error,                  // the submission returned an error status or broke the ABI
  unsupported,            // the submission declared the case unsupported
  build_failed,           // the submission did not compile
  unavailable,            // could not be run here (no compiler or device for it)
  harness_error,          // the harness itself failed; the submission is not blamed
};

std::string_view verdict_name(Verdict verdict);
Verdict verdict_from_name(std::string_view name);  // throws UsageError
std::vector<Verdict> all_verdicts();

// A verdict that counts against the submission (everything except pass,
// unsupported, unavailable and harness_error).
bool is_failure(Verdict verdict);

// How grave a verdict is, for a case that found several things wrong: a
// lost worker first, then a broken contract (status, guards, inputs), then
// wrong answers, then false claims (timing, speed, memory); a harness error
// after every failure of the submission's. Larger is graver; pass is 0.
int gravity(Verdict verdict);

// Thrown by whatever decides a case early (a check, the executor); the runner
// records it as the case's verdict.
class VerdictException : public std::exception {
 public:
  VerdictException(Verdict verdict, std::string message) : verdict_(verdict), message_(std::move(message)) {}
  Verdict verdict() const { return verdict_; }
  const std::string& message() const { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  Verdict verdict_;
  std::string message_;
};

enum class Suite { correctness, edge, stability, perf };

std::string_view suite_name(Suite suite);
Suite suite_from_name(std::string_view name);  // throws UsageError
std::vector<Suite> all_suites();

}  // namespace harness
