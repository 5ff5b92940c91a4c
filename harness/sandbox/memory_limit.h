// The memory_limit verdict: a case that failed because its worker ran out of
// the address space the sandbox gave it (RLIMIT_AS, --memory-limit).
//
// The limit is the harness's fact; that an allocation failed is read from
// what the worker said as it failed (its error message or its last output:
// std::bad_alloc, Python's MemoryError, ENOMEM's text). The kernel keeps no
// record of a refused mmap, and a worker killed by the abort that follows an
// uncaught bad_alloc leaves no /proc entry to read. A submission could write
// those words itself, but only to exchange one failing verdict (error,
// crash) for another: nothing it says can turn a failure into a pass.
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
