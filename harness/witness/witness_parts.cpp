#include "harness/witness/witness_parts.h"

#include "harness/core/switched_off.h"

namespace harness {

const std::vector<std::string>& witness_part_names() {
  static const std::vector<std::string> names{
      "gpu-staging",         "gpu-staging-time", "device-memory-verdict", "gpu-host-memory-verdict",
      "twin-reads-at-reply", "process-claims",   "twin-late-writes"};
  return names;
}

std::vector<std::string> disabled_witness_parts() {
  return switched_off_parts("HARNESS_WITNESS_DISABLE", witness_part_names());
}

bool witness_part_disabled(const std::string& part) {
  return part_switched_off("HARNESS_WITNESS_DISABLE", witness_part_names(), part);
}

}  // namespace harness
