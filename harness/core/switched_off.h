// Defences that a variable of the environment switches off, for the tests
// that show each defence's exploit getting through without it
// (HARNESS_SANDBOX_DISABLE, HARNESS_WITNESS_DISABLE).
#pragma once

#include <string>
#include <vector>

namespace harness {

// The parts `variable` names, comma-separated, "all" for every one of
// `names`. Read on every call, so a test can change it between runs. A name
// that is not among `names` is a UsageError: a misspelt part would leave the
// defence on while the test believes it off.
std::vector<std::string> switched_off_parts(const char* variable, const std::vector<std::string>& names);
// Whether `part` is among them.
bool part_switched_off(const char* variable, const std::vector<std::string>& names, const std::string& part);

}  // namespace harness
