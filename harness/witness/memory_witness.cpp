#include "harness/witness/memory_witness.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

namespace harness {

bool memory_witness_meaningful() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

std::optional<int64_t> resident_anonymous_bytes(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string key;
  while (status >> key) {
    if (key == "RssAnon:") {
      int64_t kib = 0;
      if (status >> kib) return kib * 1024;
      return std::nullopt;
    }
    status.ignore(1 << 12, '\n');
  }
  return std::nullopt;
}

MemoryJudgement judge_memory(int64_t claimed_bytes, int64_t baseline_bytes, int64_t resident_bytes) {
  MemoryJudgement j;
  j.witnessed = std::max<int64_t>(0, resident_bytes - baseline_bytes);
  const int64_t claimed = std::max<int64_t>(0, claimed_bytes);
  j.allowed = static_cast<int64_t>(kMemoryFactor * static_cast<double>(claimed)) + kMemoryAllowanceBytes;
  if (j.witnessed > j.allowed) {
    j.understated = true;
    j.message = fmt::format(
        "claims {} bytes, but the worker's anonymous resident memory grew by {} bytes ({:.1f} MB) since the baseline: "
        "more than {:.1f}x the claim plus {} MB of allowance ({} bytes)",
        claimed, j.witnessed, static_cast<double>(j.witnessed) / 1e6, kMemoryFactor, kMemoryAllowanceBytes >> 20,
        j.allowed);
  }
  return j;
}

}  // namespace harness
