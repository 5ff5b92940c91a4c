#include "harness/sandbox/sandbox_parts.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "harness/core/error.h"

namespace harness {

const std::vector<std::string>& sandbox_part_names() {
  static const std::vector<std::string> names{"seccomp", "landlock", "caps", "dumpable", "rlimits", "reaper"};
  return names;
}

std::vector<std::string> disabled_sandbox_parts() {
  const char* value = std::getenv("HARNESS_SANDBOX_DISABLE");
  std::vector<std::string> parts;
  std::stringstream list(value ? value : "");
  for (std::string part; std::getline(list, part, ',');) {
    if (part.empty()) continue;
    if (part == "all") return sandbox_part_names();
    const auto& names = sandbox_part_names();
    // A misspelt part would leave the defence on while the test believes it off.
    if (std::find(names.begin(), names.end(), part) == names.end()) {
      throw UsageError(fmt::format("HARNESS_SANDBOX_DISABLE names '{}', which is not a part of the sandbox "
                                   "(seccomp, landlock, caps, dumpable, rlimits, reaper, all)", part));
    }
    parts.push_back(part);
  }
  return parts;
}

bool sandbox_part_disabled(const std::string& part) {
  const auto parts = disabled_sandbox_parts();
  return std::find(parts.begin(), parts.end(), part) != parts.end();
}

}  // namespace harness
