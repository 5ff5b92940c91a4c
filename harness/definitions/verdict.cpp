#include "harness/definitions/verdict.h"

#include <fmt/format.h>

#include "harness/core/error.h"

namespace harness {

std::vector<Verdict> all_verdicts() {
  return {Verdict::pass,
          Verdict::wrong_answer,
          Verdict::unwritten_output,
          Verdict::out_of_bounds_write,
          Verdict::invalid_memory_access,
          Verdict::data_race,
          Verdict::input_modified,
          Verdict::stale_output,
          Verdict::impossible_speed,
          Verdict::forged_timing,
          Verdict::understated_memory,
          Verdict::sandbox_violation,
          Verdict::memory_limit,
          Verdict::crash,
          Verdict::timeout,
          Verdict::error,
          Verdict::unsupported,
          Verdict::build_failed,
          Verdict::unavailable,
          Verdict::harness_error};
}

int gravity(Verdict verdict) {
  switch (verdict) {
    case Verdict::crash: return 19;
    case Verdict::timeout: return 18;
    case Verdict::sandbox_violation: return 17;
    case Verdict::memory_limit: return 16;
    case Verdict::build_failed: return 15;
    case Verdict::error: return 14;
    case Verdict::out_of_bounds_write: return 13;
    case Verdict::invalid_memory_access: return 12;
    case Verdict::data_race: return 11;
    case Verdict::input_modified: return 10;
    case Verdict::unwritten_output: return 9;
    case Verdict::wrong_answer: return 8;
    case Verdict::stale_output: return 7;
    case Verdict::forged_timing: return 6;
    case Verdict::impossible_speed: return 5;
    case Verdict::understated_memory: return 4;
    case Verdict::harness_error: return 3;
    case Verdict::unsupported: return 2;
    case Verdict::unavailable: return 1;
    case Verdict::pass: return 0;
  }
  return 0;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return "pass";
    case Verdict::wrong_answer: return "wrong_answer";
    case Verdict::unwritten_output: return "unwritten_output";
    case Verdict::out_of_bounds_write: return "out_of_bounds_write";
    case Verdict::invalid_memory_access: return "invalid_memory_access";
    case Verdict::data_race: return "data_race";
    case Verdict::input_modified: return "input_modified";
    case Verdict::stale_output: return "stale_output";
    case Verdict::impossible_speed: return "impossible_speed";
    case Verdict::forged_timing: return "forged_timing";
    case Verdict::understated_memory: return "understated_memory";
    case Verdict::sandbox_violation: return "sandbox_violation";
    case Verdict::memory_limit: return "memory_limit";
    case Verdict::crash: return "crash";
    case Verdict::timeout: return "timeout";
    case Verdict::error: return "error";
    case Verdict::unsupported: return "unsupported";
    case Verdict::build_failed: return "build_failed";
    case Verdict::unavailable: return "unavailable";
    case Verdict::harness_error: return "harness_error";
  }
  return "?";
}

Verdict verdict_from_name(std::string_view name) {
  for (Verdict v : all_verdicts()) {
    if (verdict_name(v) == name) return v;
  }
  throw UsageError(fmt::format("unknown verdict '{}'", name));
}

bool is_failure(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
    case Verdict::unsupported:
    case Verdict::unavailable:
    case Verdict::harness_error: return false;
    default: return true;
  }
}

std::vector<Suite> all_suites() { return {Suite::correctness, Suite::edge, Suite::stability, Suite::perf}; }

std::string_view suite_name(Suite suite) {
  switch (suite) {
    case Suite::correctness: return "correctness";
    case Suite::edge: return "edge";
    case Suite::stability: return "stability";
    case Suite::perf: return "perf";
  }
  return "?";
}

Suite suite_from_name(std::string_view name) {
  for (Suite s : all_suites()) {
    if (suite_name(s) == name) return s;
  }
  throw UsageError(fmt::format("unknown suite '{}' (expected correctness, edge, stability or perf)", name));
}

}  // namespace harness
