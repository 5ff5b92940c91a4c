#include "harness/witness/memory_witness.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/core/processes.h"

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
// anonymous mapping (shown as /dev/zero: pinned host memory from
// cudaMallocHost is one), System V shared memory, a file in /dev/shm, or an
// NVIDIA device file, through which the driver maps memory of its own into
// a CUDA process (part of the baseline, the same through every honest case).
bool shared_memory_path(const std::string& path) {
  return path.rfind("/memfd:", 0) == 0 || path.rfind("/dev/zero", 0) == 0 || path.rfind("/SYSV", 0) == 0 ||
         path.rfind("/dev/shm/", 0) == 0 || path.rfind("/dev/nvidia", 0) == 0;
}

// Bytes of the memory files `pid` holds open (by descriptor) other than
// `harness_files`, each file's inode added to `counted`: a memory file
// written and never mapped, or a tensor's kept past its release, is in no
// mapping. Nothing where /proc cannot tell.
int64_t held_memory_file_bytes(pid_t pid, const std::set<uint64_t>& harness_files, std::set<uint64_t>& counted) {
  int64_t total = 0;
  std::error_code ec;
  const std::string folder = fmt::format("/proc/{}/fd", pid);
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code link_error;
    const auto target = std::filesystem::read_symlink(it->path(), link_error);
    if (link_error || target.string().rfind("/memfd:", 0) != 0) continue;
    struct stat file {};
    if (::stat(it->path().c_str(), &file) != 0) continue;
    const auto inode = static_cast<uint64_t>(file.st_ino);
    if (harness_files.count(inode) || !counted.insert(inode).second) continue;
    total += static_cast<int64_t>(file.st_blocks) * 512;
  }
  return total;
}

// Resident bytes of the shared memory mappings of `pid` outside
// `harness_files` and `counted`, and of its huge pages (in no Rss line),
// from /proc/<pid>/smaps; nullopt when it cannot be read. The inodes it
// counted join `counted`, so that a mapping a forked child shares counts
// once in the group.
std::optional<int64_t> foreign_shared_bytes(pid_t pid, const std::set<uint64_t>& harness_files,
                                            std::set<uint64_t>& counted) {
  std::ifstream smaps(fmt::format("/proc/{}/smaps", pid));
  if (!smaps) return std::nullopt;
  int64_t total = 0;
  bool counting = false;  // the current mapping is shared memory of its own
  bool read_any = false;
  std::set<uint64_t> mapped;
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
      counting = shared_memory_path(path) && !harness_files.count(inode) && !counted.count(inode);
      if (counting) mapped.insert(inode);
    } else if ((counting && first == "Rss:") || first == "Private_Hugetlb:" || first == "Shared_Hugetlb:") {
      int64_t kib = 0;
      if (fields >> kib) total += kib * 1024;
    }
  }
  if (!read_any) return std::nullopt;  // a non-dumpable process's smaps reads empty
  counted.insert(mapped.begin(), mapped.end());
  return total;
}

}  // namespace

std::optional<int64_t> resident_anonymous_bytes(pid_t pid) { return status_bytes(pid, "RssAnon:"); }

namespace {

// The anonymous memory of `pid` as its share of each page (Pss_Anon in
// /proc/<pid>/smaps_rollup): a page a forked child still shares with its
// parent counts half in each, so a group's shares add up to the memory it
// holds; RssAnon would count it in both. RssAnon where the kernel has no
// such field.
std::optional<int64_t> anonymous_share_bytes(pid_t pid) {
  std::ifstream rollup(fmt::format("/proc/{}/smaps_rollup", pid));
  std::string key;
  while (rollup >> key) {
    if (key == "Pss_Anon:") {
      int64_t kib = 0;
      if (rollup >> kib) return kib * 1024;
      break;
    }
    rollup.ignore(1 << 12, '\n');
  }
  return resident_anonymous_bytes(pid);
}

// resident_private_bytes of one process, its anonymous memory read by
// `anonymous`, the memory files in `counted` (those another process of the
// group holds) apart.
std::optional<int64_t> private_bytes(pid_t pid, const std::set<uint64_t>& harness_files, std::set<uint64_t>& counted,
                                     std::optional<int64_t> (*anonymous_of)(pid_t)) {
  const auto anonymous = anonymous_of(pid);
  if (!anonymous) return std::nullopt;
  const int64_t held = held_memory_file_bytes(pid, harness_files, counted);
  if (const auto shared = foreign_shared_bytes(pid, harness_files, counted)) return *anonymous + held + *shared;
  return *anonymous + held + status_bytes(pid, "RssShmem:").value_or(0);
}

}  // namespace

std::optional<int64_t> resident_private_bytes(pid_t pid, const std::set<uint64_t>& harness_files) {
  std::set<uint64_t> counted;
  return private_bytes(pid, harness_files, counted, resident_anonymous_bytes);
}

std::optional<int64_t> group_private_bytes(pid_t leader, const std::set<uint64_t>& harness_files) {
  std::set<uint64_t> counted;
  const auto own = private_bytes(leader, harness_files, counted, anonymous_share_bytes);
  if (!own) return std::nullopt;
  int64_t total = *own;
  for (const pid_t member : processes_in_group(leader)) {
    // A member that ended between the listing and its reading holds nothing.
    if (member != leader) total += private_bytes(member, harness_files, counted, anonymous_share_bytes).value_or(0);
  }
  return total;
}

int64_t folder_bytes(const std::string& folder) {
  int64_t total = 0;
  std::error_code ec;
  // Not following links: a link to a file elsewhere holds nothing here.
  for (std::filesystem::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat entry {};
    if (::lstat(it->path().c_str(), &entry) == 0 && S_ISREG(entry.st_mode)) {
      total += static_cast<int64_t>(entry.st_blocks) * 512;
    }
  }
  return total;
}

MemoryJudgement judge_growth(int64_t claimed_bytes, int64_t growth_bytes, int64_t allowance_bytes,
                             const std::string& claim_wording, const std::string& witnessed_wording) {
  MemoryJudgement j;
  j.witnessed = std::max<int64_t>(0, growth_bytes);
  const int64_t claimed = std::max<int64_t>(0, claimed_bytes);
  j.allowed = static_cast<int64_t>(kMemoryFactor * static_cast<double>(claimed)) + allowance_bytes;
  if (j.witnessed > j.allowed) {
    j.understated = true;
    j.message = fmt::format(
        "{} {} bytes, but {} grew by {} bytes ({:.1f} MB) since the baseline: "
        "more than {:.1f}x the claim plus {} MB of allowance ({} bytes)",
        claim_wording, claimed, witnessed_wording, j.witnessed, static_cast<double>(j.witnessed) / 1e6, kMemoryFactor,
        allowance_bytes >> 20, j.allowed);
  }
  return j;
}

MemoryJudgement judge_memory(int64_t claimed_bytes, int64_t baseline_bytes, int64_t resident_bytes,
                             int64_t allowance_bytes) {
  return judge_growth(claimed_bytes, resident_bytes - baseline_bytes, allowance_bytes, "claims",
                      "the memory its worker holds of its own (resident, anonymous and shared)");
}

}  // namespace harness
