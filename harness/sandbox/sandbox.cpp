#include "harness/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "harness/core/error.h"
#include "harness/sandbox/landlock_ruleset.h"
#include "harness/sandbox/private_paths.h"
#include "harness/sandbox/process_limits.h"
#include "harness/sandbox/sandbox_parts.h"
#include "harness/sandbox/seccomp_filter.h"

namespace harness {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// RLIMIT_NPROC counts every process of the user: the worker gets room for
// this many more than the user already has.
constexpr uint64_t kExtraProcesses = 256;

SandboxSettings& settings_store() {
  static SandboxSettings settings;
  return settings;
}

}  // namespace

void configure_sandbox(const SandboxSettings& settings) { settings_store() = settings; }
const SandboxSettings& sandbox_settings() { return settings_store(); }

uint64_t applied_address_space_limit(bool cuda_worker) {
  // CUDA reserves far more address space than it uses (unified addressing),
  // and AddressSanitizer reserves terabytes of shadow: RLIMIT_AS would stop
  // both before any submission code runs.
  if (cuda_worker || kAddressSanitizer) return 0;
  const auto disabled = disabled_sandbox_parts();
  if (std::find(disabled.begin(), disabled.end(), "rlimits") != disabled.end()) return 0;
  return sandbox_settings().memory_limit_bytes;
}

uint64_t parse_memory_size(const std::string& text) {
  if (text == "none" || text == "0") return 0;
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  uint64_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "K" || unit == "KiB") scale = 1ull << 10;
  if (unit == "M" || unit == "MiB") scale = 1ull << 20;
  if (unit == "G" || unit == "GiB") scale = 1ull << 30;
  if (unit == "T" || unit == "TiB") scale = 1ull << 40;
  if (digits == 0 || digits > 12 || scale == 0) {
    throw UsageError(
        fmt::format("--memory-limit '{}' is not a size: write bytes or a number with K, M, G or T "
                    "(e.g. 8G), or 'none'",
                    text));
  }
  const uint64_t value = std::stoull(text.substr(0, digits)) * scale;
  if (value < (64ull << 20)) {
    throw UsageError(fmt::format("--memory-limit '{}' is below 64M: no interpreter or runtime starts in that", text));
  }
  return value;
}

struct PreparedSandbox::Parts {
  bool limits_on = false;
  ProcessLimits limits;
  bool caps_on = false;
  int landlock_fd = -1;
  int landlock_abi = 0;
  bool own_process_files_writable = false;  // a CUDA worker: see landlock_allow_own_process_files
  bool seccomp_on = false;
  std::vector<sock_filter> seccomp_program;
};

PreparedSandbox::PreparedSandbox(const SandboxRequest& request) : parts_(std::make_unique<Parts>()) {
  refuse_reads_of_private_paths(readable_paths(request), request.private_paths);
  prepare_harness_process();
  warn_about_missing_sandbox_parts();
  const auto disabled = disabled_sandbox_parts();
  const auto off = [&](const char* part) {
    return std::find(disabled.begin(), disabled.end(), part) != disabled.end();
  };
  const SandboxSettings& settings = sandbox_settings();

  parts_->limits_on = !off("rlimits");
  parts_->limits.address_space_bytes = applied_address_space_limit(request.cuda);
  parts_->limits.file_size_bytes = settings.file_size_limit_bytes;
  if (request.may_start_processes && ::getuid() != 0) {
    parts_->limits.processes = processes_of_this_user() + kExtraProcesses;
  }
  parts_->caps_on = !off("caps");
  // compute-sanitizer injects itself into the worker and talks to it
  // through files and sockets of its own, which neither part is made for.
  if (!off("landlock") && !request.under_sanitizer) {
    const int abi = landlock_abi();
    if (abi > 0) parts_->landlock_fd = make_landlock_ruleset(request, abi);
    parts_->landlock_abi = abi;
    parts_->own_process_files_writable = request.cuda;
  }
  if (!off("seccomp") && !request.under_sanitizer && seccomp_unavailable_reason().empty()) {
    SeccompOptions options;
    options.may_start_processes = request.may_start_processes;
    options.ptrace_fails_softly = kAddressSanitizer;
    // A compiled CPU worker's memory is witnessed; the CUDA runtime and the
    // interpreters of process submissions may need memory files.
    options.may_make_memory_files = request.cuda || request.may_start_processes;
    parts_->seccomp_program = build_seccomp_program(options);
    parts_->seccomp_on = true;
  }
}

PreparedSandbox::~PreparedSandbox() { release_parent_copies(); }

void PreparedSandbox::release_parent_copies() {
  if (parts_->landlock_fd >= 0) ::close(parts_->landlock_fd);
  parts_->landlock_fd = -1;
}

const char* PreparedSandbox::apply_in_child() const {
  const Parts& p = *parts_;
  if (p.limits_on) {
    if (const char* failed = apply_limits(p.limits)) return failed;
  }
  if (p.caps_on) {
    if (const char* failed = drop_capabilities()) return failed;
  }
  // Required by Landlock and by seccomp for an unprivileged process; keeps
  // exec from gaining privileges (set-uid binaries) in any case.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "prctl(PR_SET_NO_NEW_PRIVS)";
  if (p.landlock_fd >= 0) {
    if (p.own_process_files_writable) {
      if (const char* failed = landlock_allow_own_process_files(p.landlock_fd, p.landlock_abi)) return failed;
    }
    if (const char* failed = landlock_restrict(p.landlock_fd)) return failed;
  }
  if (p.seccomp_on) {
    if (const char* failed = install_seccomp(p.seccomp_program)) return failed;
  }
  return nullptr;
}

bool ptrace_kills_the_worker() { return !kAddressSanitizer; }

std::vector<std::string> sandbox_environment() {
  if (!kAddressSanitizer) return {};
  const char* options = std::getenv("ASAN_OPTIONS");
  return {std::string("ASAN_OPTIONS=") + (options && *options ? std::string(options) + ":" : "") + "detect_leaks=0"};
}

int keep_clear_of_standard_fds(int fd) {
  if (fd >= 10) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  HARNESS_CHECK_ERRNO(moved, "fcntl(F_DUPFD_CLOEXEC) of fd {}", fd);
  return moved;
}

bool ended_by_sandbox(int wait_status) { return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGSYS; }

nlohmann::json sandbox_description() {
  const auto disabled = disabled_sandbox_parts();
  const auto off = [&](const char* part) {
    return std::find(disabled.begin(), disabled.end(), part) != disabled.end();
  };
  const SandboxSettings& settings = sandbox_settings();
  nlohmann::json d = nlohmann::json::object();
  const std::string& seccomp_missing = seccomp_unavailable_reason();
  d["seccomp"] = off("seccomp")            ? "off: HARNESS_SANDBOX_DISABLE"
                 : seccomp_missing.empty() ? "on"
                                           : "unavailable: " + seccomp_missing;
  std::string why;
  const int abi = landlock_abi(&why);
  d["landlock"] = off("landlock") ? "off: HARNESS_SANDBOX_DISABLE"
                  : abi > 0       ? fmt::format("on (ABI {}{})", abi,
                                          abi >= 6 ? ""
                                                         : "; signals to the harness are "
                                                           "stopped by seccomp alone")
                                  : "unavailable: " + why;
  d["capabilities"] = off("caps") ? "kept: HARNESS_SANDBOX_DISABLE" : "dropped";
  d["harness_not_dumpable"] = !off("dumpable");
  d["subreaper"] = !off("reaper");
  d["rlimits"] = !off("rlimits");
  d["memory_limit_bytes"] = settings.memory_limit_bytes;
  d["address_space_limit"] = kAddressSanitizer ? "none: AddressSanitizer build"
                             : settings.memory_limit_bytes == 0
                                 ? "none: --memory-limit none"
                                 : "CPU workers and process submissions; not CUDA workers (CUDA reserves more "
                                   "address space than any limit that means something)";
  d["file_size_limit_bytes"] = settings.file_size_limit_bytes;
  d["processes"] =
      "compiled workers: none (threads only); process submissions: RLIMIT_NPROC, which binds no root "
      "process, and every descendant killed when the process ends";
  d["disabled"] = disabled;
  return d;
}

void warn_about_missing_sandbox_parts() {
  static std::once_flag once;
  std::call_once(once, [] {
    const nlohmann::json d = sandbox_description();
    for (const char* part : {"seccomp", "landlock"}) {
      const std::string state = d[part].get<std::string>();
      if (state.rfind("on", 0) != 0) std::fprintf(stderr, "harness: sandbox: %s is %s\n", part, state.c_str());
    }
    if (!d["disabled"].empty()) {
      std::fprintf(stderr, "harness: sandbox: switched off by HARNESS_SANDBOX_DISABLE: %s\n",
                   d["disabled"].dump().c_str());
    }
  });
}

}  // namespace harness
