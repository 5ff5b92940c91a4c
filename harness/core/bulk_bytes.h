// Passes over buffers of hundreds of megabytes (integrity checks, poison
// and staging between rounds of timed calls) split over the host's cores:
// one core alone does not reach the memory's bandwidth, and these passes
// ran longer than the calls they surround.
#pragma once

#include <cstddef>
#include <functional>

namespace harness {

// Below this many bytes a pass stays on the calling thread.
inline constexpr size_t kBulkBytes = size_t{4} << 20;

// body(begin, end) on disjoint chunks covering [0, bytes) whose boundaries
// are multiples of `align` (a whole element, a staging block); one call for
// fewer than kBulkBytes.
void for_byte_chunks(size_t bytes, size_t align, const std::function<void(size_t begin, size_t end)>& body);

bool same_bytes(const void* a, const void* b, size_t bytes);

// memcpy of `bytes` from `from` to `to` (not overlapping), in chunks side by side.
void copy_bytes(void* to, const void* from, size_t bytes);

}  // namespace harness
