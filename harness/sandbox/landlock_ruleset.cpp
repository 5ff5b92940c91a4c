#include "harness/sandbox/landlock_ruleset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/files.h"

namespace harness {

namespace {

// The uapi header of the build machine may predate the running kernel: the
// rights and scopes of later ABIs are spelled out here.
constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2, kReadDir = 1ull << 3;
constexpr uint64_t kRefer = 1ull << 13;                                       // ABI 2
constexpr uint64_t kTruncate = 1ull << 14;                                    // ABI 3
constexpr uint64_t kIoctlDev = 1ull << 15;                                    // ABI 5
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;       // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;  // ABI 6
constexpr uint32_t kRuleTypePathBeneath = 1;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;

// struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

uint64_t fs_rights(int abi) {
  uint64_t rights = (1ull << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

// Rights that apply to a file (not a folder); a rule on a file with other
// rights is refused by the kernel.
uint64_t file_rights(int abi) { return (kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev) & fs_rights(abi); }

// What every worker reads: libraries, the interpreter and its packages,
// configuration (ld.so.cache, locales), /proc and /sys (the CPU count, the
// CUDA driver's state; /proc/<harness>/mem stays closed: see SECURITY.md).
const char* const kSystemReadable[] = {"/usr",  "/lib", "/lib32", "/lib64", "/libx32", "/bin",
                                       "/sbin", "/etc", "/opt",   "/proc",  "/sys"};
const char* const kDeviceFiles[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

void add_path_rule(int ruleset, const std::string& path, uint64_t rights, int abi) {
  const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd == -1) return;  // a path this machine lacks needs no rule
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= file_rights(abi);
  PathBeneathAttr rule{rights, fd};
  const long rc = ::syscall(SYS_landlock_add_rule, ruleset, kRuleTypePathBeneath, &rule, 0);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) {
    errno = saved;
    HARNESS_CHECK_ERRNO(-1, "landlock_add_rule for '{}' (rights {:#x})", path, rights);
  }
}

// An executable's installation: /usr for /usr/bin/python3, the venv for
// /venv/bin/python3 (and the same for the target of a symbolic link).
void add_install_prefixes(const std::string& path, std::set<std::string>& paths) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return;
  for (const auto& p : {std::filesystem::path(path), std::filesystem::canonical(path, ec)}) {
    if (p.empty()) continue;
    const auto prefix = p.parent_path().parent_path();
    if (!prefix.empty() && prefix != prefix.root_path()) paths.insert(prefix.string());
  }
}

}  // namespace

int landlock_abi(std::string* why) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 0) {
    if (why) {
      *why = errno == EOPNOTSUPP
                 ? "Landlock is built into this kernel but not enabled (boot with lsm=...,landlock)"
                 : fmt::format("this kernel has no Landlock (landlock_create_ruleset: {})", std::strerror(errno));
    }
    return 0;
  }
  return static_cast<int>(abi);
}

std::set<std::string> readable_paths(const SandboxRequest& request) {
  std::set<std::string> readable(std::begin(kSystemReadable), std::end(kSystemReadable));
  readable.insert(request.readable.begin(), request.readable.end());
  for (const auto& program : request.programs) {
    readable.insert(program);
    add_install_prefixes(program, readable);
  }
  // An interpreter's own search paths (a virtual environment, user site
  // packages, PYTHONPATH) are read from the harness's environment. One that
  // holds or lies in a private folder (PYTHONPATH=/tmp) is left out: the
  // user chose it, not a submission, and it must not fail every process
  // submission nor open the run's folders.
  std::vector<std::string> search_paths;
  for (const char* name : {"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHOME"}) {
    if (const char* value = std::getenv(name); value && *value) search_paths.emplace_back(value);
  }
  if (const char* python_path = std::getenv("PYTHONPATH")) {
    std::string list = python_path;
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) search_paths.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  if (const char* home = std::getenv("HOME"); home && *home) search_paths.push_back(std::string(home) + "/.local/lib");
  for (const std::string& path : search_paths) {
    const bool private_overlap =
        std::any_of(request.private_paths.begin(), request.private_paths.end(),
                    [&](const std::string& kept) { return path_holds(path, kept) || path_holds(kept, path); });
    if (!private_overlap) readable.insert(path);
  }
  return readable;
}

int make_landlock_ruleset(const SandboxRequest& request, int abi) {
  RulesetAttr attr{fs_rights(abi), 0, 0};
  size_t size = sizeof(uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;  // handled and never allowed: no TCP
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnix | kScopeSignal;
    size = sizeof attr;
  }
  const long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  HARNESS_CHECK_ERRNO(ruleset, "landlock_create_ruleset (ABI {}, rights {:#x})", abi, attr.handled_access_fs);
  const int fd = keep_clear_of_standard_fds(static_cast<int>(ruleset));
  try {
    const uint64_t read = kExecute | kReadFile | kReadDir;
    for (const auto& path : readable_paths(request)) add_path_rule(fd, path, read, abi);

    const uint64_t device = kReadFile | kWriteFile | kTruncate | kIoctlDev;
    for (const char* path : kDeviceFiles) add_path_rule(fd, path, device, abi);
    if (request.cuda) {
      // /dev/nvidia0, nvidiactl, nvidia-uvm, ...: opened read-write, driven by ioctl.
      if (DIR* dev = ::opendir("/dev")) {
        while (const dirent* entry = ::readdir(dev)) {
          if (std::strncmp(entry->d_name, "nvidia", 6) == 0)
            add_path_rule(fd, std::string("/dev/") + entry->d_name, device, abi);
        }
        ::closedir(dev);
      }
      if (std::filesystem::exists("/dev/nvidia-caps")) add_path_rule(fd, "/dev/nvidia-caps", read, abi);
    }
    if (!request.writable.empty()) add_path_rule(fd, request.writable, fs_rights(abi), abi);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

const char* landlock_allow_own_process_files(int ruleset_fd, int abi) {
  const int own = ::open("/proc/self", O_PATH | O_DIRECTORY);  // not close-on-exec: see the header
  if (own == -1) return "open(/proc/self)";
  PathBeneathAttr rule{kWriteFile | (abi >= 3 ? kTruncate : 0), own};
  if (::syscall(SYS_landlock_add_rule, ruleset_fd, kRuleTypePathBeneath, &rule, 0) != 0)
    return "landlock_add_rule(/proc/self)";
  return nullptr;
}

const char* landlock_restrict(int ruleset_fd) {
  if (::syscall(SYS_landlock_restrict_self, ruleset_fd, 0) != 0) return "landlock_restrict_self";
  return nullptr;
}

}  // namespace harness
