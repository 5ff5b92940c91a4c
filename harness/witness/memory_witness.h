// The memory witness: what a worker process really holds, read by the
// harness from /proc, set beside what the submission reports: its growth since
// a baseline (before the library loads in a compiled worker; the case's first
// reading for a process submission, whose group and scratch files count). See
// docs/ARCHITECTURE.md, Witnesses.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace harness {

// Growth beyond kMemoryFactor times the claim plus an allowance (on the CPU
// kMemoryAllowanceBytes: allocator slack, message buffers, a thread pool's
// stacks) is understated_memory.
inline constexpr double kMemoryFactor = 1.1;
inline constexpr int64_t kMemoryAllowanceBytes = int64_t{1} << 20;

// What a GPU worker's host memory may grow by beyond kMemoryFactor times
// its claim, in place of kMemoryAllowanceBytes: room for its CUDA
// runtime's share, which grows after the baseline (modules loaded at a
// kernel's first launch, the runtime's buffers for pageable copies).
inline constexpr int64_t kGpuHostMemoryAllowanceBytes = int64_t{64} << 20;

// RssAnon of `pid` in bytes, or nullopt when /proc cannot tell (no such
// process, a kernel without the field).
std::optional<int64_t> resident_anonymous_bytes(pid_t pid);

// What `pid` holds of its own: anonymous resident memory, resident pages of
// shared memory mappings (memory files, shared anonymous, System V), huge
// pages and the memory files it holds open, all but the inodes in
// `harness_files` (the harness's tensors, sealed at their size). A
// non-dumpable process's shared memory all counts, the harness's tensors too.
// nullopt when /proc cannot tell. Not seen: pipe and socket buffers.
std::optional<int64_t> resident_private_bytes(pid_t pid, const std::set<uint64_t>& harness_files);

// What the processes of the group `leader` leads hold of their own: each
// one's anonymous memory by its proportional share of each page (Pss_Anon,
// so a page a forked child still shares counts once over the group), plus
// its shared mappings and memory files as resident_private_bytes counts
// them, a file two of them hold open once; nullopt when /proc cannot tell
// about the leader. The inodes in `harness_files` (the twins a process
// computes in, harness/device_memory) are left out, as above.
std::optional<int64_t> group_private_bytes(pid_t leader, const std::set<uint64_t>& harness_files = {});

// Bytes of the regular files under `folder` (their allocated blocks, links
// not followed); 0 when it cannot be read.
int64_t folder_bytes(const std::string& folder);

// False in a build under AddressSanitizer, whose workers are built the same
// way: their resident memory holds the sanitizer's shadow and quarantine, so
// memory is not witnessed there.
bool memory_witness_meaningful();

struct MemoryJudgement {
  int64_t witnessed = 0;  // growth of the resident set since the baseline
  int64_t allowed = 0;    // the most the claim lets it hold
  bool understated = false;
  std::string message;  // names both figures when understated
};

// Growth beyond kMemoryFactor times the claim plus `allowance_bytes` is
// understated; the message says "<claim_wording> N bytes, but
// <witnessed_wording> grew by ...".
MemoryJudgement judge_growth(int64_t claimed_bytes, int64_t growth_bytes, int64_t allowance_bytes,
                             const std::string& claim_wording, const std::string& witnessed_wording);

// `allowance_bytes`: kMemoryAllowanceBytes for a CPU worker,
// kGpuHostMemoryAllowanceBytes for a GPU worker's host memory.
MemoryJudgement judge_memory(int64_t claimed_bytes, int64_t baseline_bytes, int64_t resident_bytes,
                             int64_t allowance_bytes = kMemoryAllowanceBytes);

}  // namespace harness
