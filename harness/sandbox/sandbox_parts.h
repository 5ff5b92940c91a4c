// The parts of the sandbox that HARNESS_SANDBOX_DISABLE switches off, for the
// tests that show each part's exploit getting through without it. A run with
// any part off says so in results.json and on stderr.
#pragma once

#include <string>
#include <vector>

namespace harness {

// seccomp, landlock, caps, dumpable, rlimits, reaper.
const std::vector<std::string>& sandbox_part_names();
// Read from the environment on every call, so a test can change it between runs.
bool sandbox_part_disabled(const std::string& part);
std::vector<std::string> disabled_sandbox_parts();

}  // namespace harness
