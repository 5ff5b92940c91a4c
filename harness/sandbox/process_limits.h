// Resource limits and capabilities of a sandboxed child. The values are
// chosen before fork; the child applies them with async-signal-safe calls.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace harness {

struct ProcessLimits {
  uint64_t address_space_bytes = 0;  // RLIMIT_AS; 0: none
  uint64_t file_size_bytes = 0;      // RLIMIT_FSIZE; 0: none
  uint64_t processes = 0;            // RLIMIT_NPROC; 0: none (it never binds root)
};

// How many processes the real user has now (for a NPROC bound that leaves
// the user's other processes room), or 0 when /proc cannot tell.
uint64_t processes_of_this_user();

// In the child: the limits, and no core files.
const char* apply_limits(const ProcessLimits& limits);
// In the child: drop the bounding set, the ambient set and every effective,
// permitted and inheritable capability. Root stays uid 0 but without
// CAP_SYS_PTRACE, CAP_DAC_OVERRIDE, CAP_KILL and the rest.
const char* drop_capabilities();

}  // namespace harness
