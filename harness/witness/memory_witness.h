// The memory witness: what a worker process really holds, read by the
// harness from /proc, set beside what the submission reports.
//
// On the CPU the witness is the worker's anonymous resident memory (RssAnon
// in /proc/<pid>/status): heap, stacks and private mappings the submission
// has touched. The harness's shared tensors are shared memory, not
// anonymous, so they do not count. The claim is compared with the growth of
// that figure since a baseline the driver takes before the library does the
// work in question (before a cache is created, before a forward runs); the
// worker's own footprint is in the baseline. Growth beyond the claim by more
// than kMemoryFactor times the claim plus kMemoryAllowanceBytes (allocator
// slack, the worker's message buffers, a thread pool's stacks) is the
// verdict understated_memory.
//
// On a GPU the device memory the worker uses is read from the driver
// (device_memory.h) and reported beside the claim, not judged (see
// docs/ARCHITECTURE.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace harness {

inline constexpr double kMemoryFactor = 1.1;
inline constexpr int64_t kMemoryAllowanceBytes = int64_t{1} << 20;

// RssAnon of `pid` in bytes, or nullopt when /proc cannot tell (no such
// process, a kernel without the field).
std::optional<int64_t> resident_anonymous_bytes(pid_t pid);

// False in a build under AddressSanitizer, whose workers are built the same
// way: their resident memory holds the sanitizer's shadow and its quarantine
// of freed blocks (an honest cache measured 4.7 MB against a 3.2 MB claim),
// so the figure says nothing about the submission, and memory is not
// witnessed there.
bool memory_witness_meaningful();

struct MemoryJudgement {
  int64_t witnessed = 0;   // growth of the resident set since the baseline
  int64_t allowed = 0;     // the most the claim lets it hold
  bool understated = false;
  std::string message;     // names both figures when understated
};

MemoryJudgement judge_memory(int64_t claimed_bytes, int64_t baseline_bytes, int64_t resident_bytes);

}  // namespace harness
