// Splits [0, n) over the host's cores for the harness's own heavy loops
// (input generation, float64 references, checks). Deterministic: each index
// is handled exactly once, and callers derive per-index seeds, so the result
// never depends on the number of threads.
#pragma once

#include <cstddef>
#include <functional>

namespace harness {

// Calls body(begin, end) on disjoint chunks covering [0, n). Rethrows the
// first exception a chunk threw.
void parallel_for(size_t n, const std::function<void(size_t begin, size_t end)>& body);

}  // namespace harness
