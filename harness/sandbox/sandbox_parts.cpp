#include "harness/sandbox/sandbox_parts.h"

#include "harness/core/switched_off.h"

namespace harness {

const std::vector<std::string>& sandbox_part_names() {
  static const std::vector<std::string> names{"seccomp", "landlock", "caps", "dumpable", "rlimits", "reaper"};
  return names;
}

std::vector<std::string> disabled_sandbox_parts() {
  return switched_off_parts("HARNESS_SANDBOX_DISABLE", sandbox_part_names());
}

bool sandbox_part_disabled(const std::string& part) {
  return part_switched_off("HARNESS_SANDBOX_DISABLE", sandbox_part_names(), part);
}

}  // namespace harness
