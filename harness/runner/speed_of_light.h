// The verdict impossible_speed: a correct answer faster than its byte model
// allows at the measured ceilings cannot be real (skipped work, a cached
// answer). Judged only where the rotating input sets really missed the
// cache (TimingResult::cache_cold).
#pragma once

#include <optional>
#include <string>

#include "harness/device/device_info.h"
#include "harness/results/results.h"

namespace harness {

// The message of the verdict, or nothing where the case's speed is possible.
std::optional<std::string> impossible_speed(const CaseResult& result, const DeviceInfo& device);

}  // namespace harness
