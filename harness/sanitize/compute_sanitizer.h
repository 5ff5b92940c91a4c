// `harness run --sanitize`: CUDA workers run under NVIDIA's compute-sanitizer
// (memcheck, or racecheck where asked), each case in a worker of its own, so
// that the report the sanitizer writes as the worker exits is that case's,
// and its first error becomes a verdict of the case.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/definitions/verdict.h"

namespace harness {

struct SanitizerSetting {
  std::string tool;     // "memcheck" | "racecheck"
  std::string program;  // the compute-sanitizer executable
};

// The setting for `tool`, with the sanitizer found: $HARNESS_COMPUTE_SANITIZER,
// else beside the CUDA compiler this harness was built with, else
// /usr/local/cuda/bin, else on PATH. UsageError for another tool or where
// none is found, saying where it looked.
SanitizerSetting resolve_sanitizer(const std::string& tool);

// The arguments (after the sanitizer itself) that run `program arguments...`
// under it, its report written to `report_path`.
std::vector<std::string> sanitizer_arguments(const SanitizerSetting& setting, const std::string& report_path,
                                             const std::string& program, const std::vector<std::string>& arguments);

struct SanitizerFinding {
  Verdict verdict = Verdict::pass;
  std::string message;
};

// The first error of a report compute-sanitizer wrote, as the verdict it
// costs: an invalid write out_of_bounds_write, a race data_race, any other
// invalid access invalid_memory_access (errors of CUDA API calls are the
// calls' own, and not counted here). nullopt for a report without errors.
std::optional<SanitizerFinding> first_sanitizer_finding(const std::string& tool, const std::string& report);

}  // namespace harness
