#include "harness/sandbox/memory_limit.h"

#include <fmt/format.h>

namespace harness {

namespace {

// What C++, C and Python say when an allocation is refused. Not "out of
// memory" alone: a KV cache refusing an append past its budget answers
// out_of_memory, which is its contract, not the sandbox's limit.
const char* const kAllocationFailures[] = {"std::bad_alloc", "MemoryError", "Cannot allocate memory"};

std::string gib(uint64_t bytes) { return fmt::format("{:.3g} GiB", static_cast<double>(bytes) / (1ull << 30)); }

}  // namespace

std::optional<std::string> memory_limit_failure(Verdict verdict, const std::string& message, uint64_t limit_bytes) {
  if (limit_bytes == 0 || (verdict != Verdict::error && verdict != Verdict::crash)) return std::nullopt;
  for (const char* words : kAllocationFailures) {
    if (message.find(words) == std::string::npos) continue;
    return fmt::format("an allocation failed ({}) under the worker's address-space limit of {} (--memory-limit): {}",
                       words, gib(limit_bytes), message);
  }
  return std::nullopt;
}

}  // namespace harness
