// What `run` and `selftest` share: discover devices, plan, measure the peaks
// of the devices the plan uses, execute with a results checkpoint after every
// case, score, and write the requested files.
#pragma once

#include <string>

#include "harness/challenge_api/run_settings.h"
#include "harness/results/results.h"
#include "harness/runner/run_plan.h"

namespace harness {

enum class Verbosity { quiet, normal, verbose };

struct SessionOptions {
  RunSelection selection;
  RunSettings settings;
  std::string json_path;      // results.json, rewritten after every case
  std::string markdown_path;  // optional
  std::string junit_path;     // optional
  Verbosity verbosity = Verbosity::normal;
  std::string command_line;
  bool seed_given = false;
  bool measure_peak = false;  // measure each device's peak again instead of using the cached one
};

RunResults run_session(const SessionOptions& options);

// Exit code of `run`: 0 when no ranked submission failed a case, 1 otherwise.
int run_exit_code(const RunResults& results);

uint64_t fresh_seed();
std::string shell_join(int argc, char** argv);

}  // namespace harness
