// Containment of every child that runs submission code (the compiled
// submission's harness-worker and process submissions), applied in the child
// between fork and exec. Its parts (seccomp, landlock, caps, dumpable,
// rlimits, reaper) can each be missing, and then say so, or be switched off
// for a test of its exploit; docs/SECURITY.md says what each one stops.
#pragma once

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace harness {

// What one child may touch, besides the system's libraries and tools.
struct SandboxRequest {
  std::vector<std::string> readable;  // files or folders it reads (and may execute)
  // Programs run from their installation (a process submission's
  // interpreter): each one and the folder two levels above it (/usr for
  // /usr/bin/python3, a virtual environment for its bin/python3) are
  // readable. Not for the worker and its library: two levels above them lie
  // the project and every other submission's build.
  std::vector<std::string> programs;
  std::string writable;  // its scratch folder; empty: none
  // The harness's own folders, which no readable path may hold or lie in
  // (harness/sandbox/private_paths.h); the writable folder may lie in one.
  std::vector<std::string> private_paths;
  bool may_start_processes = false;  // process submissions may fork (a shell, an interpreter's shim)
  bool cuda = false;                 // a CUDA worker: no address-space limit, the GPU's device files
  // The program is compute-sanitizer running the worker (harness run
  // --sanitize): no seccomp filter and no Landlock rules, its limits kept.
  bool under_sanitizer = false;
};

struct SandboxSettings {
  uint64_t memory_limit_bytes = 8ull << 30;     // address space of a worker; 0: no limit
  uint64_t file_size_limit_bytes = 1ull << 30;  // any file it writes, its log included
};

// Set once by the CLI before a run; the defaults apply otherwise.
void configure_sandbox(const SandboxSettings& settings);
const SandboxSettings& sandbox_settings();

// The address-space limit a worker of this kind gets in this build and run,
// in bytes; 0 where none applies (CUDA workers, AddressSanitizer builds,
// --memory-limit none, rlimits switched off).
uint64_t applied_address_space_limit(bool cuda_worker);

// "8G", "512M", "1073741824", "none" (no limit) -> bytes; throws UsageError.
uint64_t parse_memory_size(const std::string& text);

// Everything the child needs, made before fork: the child may only make
// async-signal-safe calls.
class PreparedSandbox {
 public:
  explicit PreparedSandbox(const SandboxRequest& request);
  ~PreparedSandbox();
  PreparedSandbox(const PreparedSandbox&) = delete;
  PreparedSandbox& operator=(const PreparedSandbox&) = delete;

  // In the child, after fork, before exec. Async-signal-safe. Returns nullptr,
  // or a message naming the step that failed (the child must then not exec).
  const char* apply_in_child() const;
  // In the parent after fork: the child holds what it needs.
  void release_parent_copies();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Moves a close-on-exec fd to 10 or above, where the child's dup2 onto
// 0..3 (stdin, stdout, stderr, the worker's socket) cannot overwrite it.
int keep_clear_of_standard_fds(int fd);

// The harness's own side, idempotent: not dumpable, child subreaper.
void prepare_harness_process();

// Live workers, so that the orphan sweep spares them. A worker's start
// holds worker_start_lock() from before its fork until it is registered: an
// orphan sweep in another thread would otherwise find the new child
// unregistered and kill it.
std::unique_lock<std::mutex> worker_start_lock();
void register_worker(pid_t pid);
void unregister_worker(pid_t pid);
// Kills and reaps every child of the harness that is not a live worker: the
// descendants a worker left behind (re-parented to the harness, the child
// subreaper). The harness starts no other long-lived children.
void kill_orphaned_descendants();

// Variables every sandboxed child gets ("NAME=value", replacing the
// harness's): in AddressSanitizer builds, the leak checker off, since it
// needs ptrace and a new process, which the sandbox denies (it would turn
// every worker's exit into a failure).
std::vector<std::string> sandbox_environment();

// A worker killed by SIGSYS: the seccomp filter stopped a forbidden call.
bool ended_by_sandbox(int wait_status);

// False in a build under AddressSanitizer, where ptrace fails with EPERM
// instead of killing the worker (the sanitizer's leak checker would use it);
// an attack by ptrace is then refused, not punished.
bool ptrace_kills_the_worker();

// Which parts are active on this machine and in this run, for results.json
// (run.sandbox) and for the one warning printed when a part is missing.
nlohmann::json sandbox_description();
// Prints, once per process, what is missing or switched off.
void warn_about_missing_sandbox_parts();

}  // namespace harness
