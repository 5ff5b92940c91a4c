// The memory_limit verdict: a case that failed because its worker ran out of
// the address space the sandbox gave it (RLIMIT_AS, --memory-limit). The
// failed allocation is read from what the worker said as it failed (the
// kernel keeps no record of a refused mmap); a submission that writes those
// words itself only trades one failing verdict for another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "harness/definitions/verdict.h"

namespace harness {

// The message of a memory_limit verdict when a case that ended with
// `verdict` (error or crash) and `message` ran out of `limit_bytes`
// (applied_address_space_limit, sandbox.h); nullopt when it did not, or when
// no limit applied (0).
std::optional<std::string> memory_limit_failure(Verdict verdict, const std::string& message, uint64_t limit_bytes);

}  // namespace harness
