// Options of a run that reach every case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "harness/ipc/protocol.h"
#include "harness/sanitize/compute_sanitizer.h"

namespace harness {

struct RunSettings {
  uint64_t seed = 0;
  bool quick = false;
  double call_timeout_s = 30;     // one call of the submission
  protocol::TimingPolicy timing;  // perf cases
  // How the harness was invoked, for the reproduce commands.
  std::string harness_command = "harness";
  // --sanitize: CUDA workers run under compute-sanitizer.
  std::optional<SanitizerSetting> sanitizer;
};

}  // namespace harness
