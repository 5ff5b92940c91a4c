#include "harness/witness/memory_witness.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

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

namespace {

// A field of /proc/<pid>/status in bytes ("RssShmem:"), or nullopt.
std::optional<int64_t> status_bytes(pid_t pid, const std::string& field) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string key;
  while (status >> key) {
    if (key == field) {
      int64_t kib = 0;
      if (status >> kib) return kib * 1024;
      return std::nullopt;
    }
    status.ignore(1 << 12, '\n');
  }
  return std::nullopt;
}

// Whether a mapping's path names shared memory: a memory file, a shared
// anonymous mapping (shown as /dev/zero), System V shared memory, a file in
// /dev/shm.
bool shared_memory_path(const std::string& path) {
  return path.rfind("/memfd:", 0) == 0 || path.rfind("/dev/zero", 0) == 0 || path.rfind("/SYSV", 0) == 0 ||
         path.rfind("/dev/shm/", 0) == 0;
}

// Resident bytes of the shared memory mappings of `pid` outside
// `harness_files`, from /proc/<pid>/smaps; nullopt when it cannot be read.
std::optional<int64_t> foreign_shared_bytes(pid_t pid, const std::set<uint64_t>& harness_files) {
  std::ifstream smaps(fmt::format("/proc/{}/smaps", pid));
  if (!smaps) return std::nullopt;
  int64_t total = 0;
  bool counted = false;  // the current mapping is shared memory of its own
  bool read_any = false;
  std::string line;
  while (std::getline(smaps, line)) {
    read_any = true;
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first.empty()) continue;
    if (first.back() != ':') {
      // A mapping's header: range, permissions, offset, device, inode, path.
      std::string perms, offset, device, path;
      uint64_t inode = 0;
      fields >> perms >> offset >> device >> inode;
      std::getline(fields >> std::ws, path);
      counted = shared_memory_path(path) && !harness_files.count(inode);
    } else if (counted && first == "Rss:") {
      int64_t kib = 0;
      if (fields >> kib) total += kib * 1024;
    }
  }
  if (!read_any) return std::nullopt;  // a non-dumpable process's smaps reads empty
  return total;
}

}  // namespace

std::optional<int64_t> resident_anonymous_bytes(pid_t pid) { return status_bytes(pid, "RssAnon:"); }

std::optional<int64_t> resident_private_bytes(pid_t pid, const std::set<uint64_t>& harness_files) {
  const auto anonymous = status_bytes(pid, "RssAnon:");
  if (!anonymous) return std::nullopt;
  if (const auto shared = foreign_shared_bytes(pid, harness_files)) return *anonymous + *shared;
  return *anonymous + status_bytes(pid, "RssShmem:").value_or(0);
}

MemoryJudgement judge_memory(int64_t claimed_bytes, int64_t baseline_bytes, int64_t resident_bytes) {
  MemoryJudgement j;
  j.witnessed = std::max<int64_t>(0, resident_bytes - baseline_bytes);
  const int64_t claimed = std::max<int64_t>(0, claimed_bytes);
  j.allowed = static_cast<int64_t>(kMemoryFactor * static_cast<double>(claimed)) + kMemoryAllowanceBytes;
  if (j.witnessed > j.allowed) {
    j.understated = true;
    j.message = fmt::format(
        "claims {} bytes, but the worker's own resident memory (anonymous and shared) grew by {} bytes ({:.1f} MB) since the baseline: "
        "more than {:.1f}x the claim plus {} MB of allowance ({} bytes)",
        claimed, j.witnessed, static_cast<double>(j.witnessed) / 1e6, kMemoryFactor, kMemoryAllowanceBytes >> 20,
        j.allowed);
  }
  return j;
}

}  // namespace harness
