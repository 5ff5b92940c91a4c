// Options of a run that reach every case.
#pragma once

#include <cstdint>
#include <string>

#include "harness/ipc/protocol.h"

namespace harness {

struct RunSettings {
  uint64_t seed = 0;
  bool quick = false;
  double call_timeout_s = 30;     // one call of the submission
  protocol::TimingPolicy timing;  // perf cases
  // How the harness was invoked, for the reproduce commands.
  std::string harness_command = "harness";
};

}  // namespace harness
