#include "harness/sandbox/process_limits.h"

#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace harness {

uint64_t processes_of_this_user() {
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  const uid_t uid = ::getuid();
  uint64_t count = 0;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    struct stat st {};
    if (::stat((std::string("/proc/") + entry->d_name).c_str(), &st) == 0 && st.st_uid == uid) ++count;
  }
  ::closedir(proc);
  return count;
}

namespace {

bool set_limit(int resource, uint64_t value) {
  const rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  return ::setrlimit(resource, &limit) == 0;
}

}  // namespace

const char* apply_limits(const ProcessLimits& limits) {
  if (!set_limit(RLIMIT_CORE, 0)) return "setrlimit(RLIMIT_CORE)";
  if (limits.address_space_bytes && !set_limit(RLIMIT_AS, limits.address_space_bytes)) return "setrlimit(RLIMIT_AS)";
  if (limits.file_size_bytes && !set_limit(RLIMIT_FSIZE, limits.file_size_bytes)) return "setrlimit(RLIMIT_FSIZE)";
  if (limits.processes && !set_limit(RLIMIT_NPROC, limits.processes)) return "setrlimit(RLIMIT_NPROC)";
  return nullptr;
}

const char* drop_capabilities() {
  // Without CAP_SETPCAP (any user but root) the bounding set cannot shrink;
  // such a process has no capabilities to lose there anyway.
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;  // past the last capability
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return "capset (dropping every capability)";
  return nullptr;
}

}  // namespace harness
