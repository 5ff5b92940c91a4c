// Clocks: a monotonic one for timing, a wall one for reports.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace harness {

inline int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// UTC, e.g. "2026-11-21T09:15:02Z".
std::string utc_timestamp();

}  // namespace harness
