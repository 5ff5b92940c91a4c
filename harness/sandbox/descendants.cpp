// The harness as child subreaper: a worker's descendants that outlive it are
// re-parented to the harness instead of init, where the harness finds and
// kills them, even those that left the worker's process group.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "harness/core/processes.h"
#include "harness/sandbox/sandbox.h"
#include "harness/sandbox/sandbox_parts.h"

namespace harness {

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::set<pid_t>& live_workers() {
  static std::set<pid_t> workers;
  return workers;
}

std::mutex& start_mutex() {
  static std::mutex m;
  return m;
}

std::vector<pid_t> orphaned_children() {
  std::vector<pid_t> found;
  const pid_t self = ::getpid();
  const std::lock_guard<std::mutex> no_start(start_mutex());
  const std::vector<ProcessEntry> processes = list_processes();
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const ProcessEntry& p : processes) {
    if (p.parent == self && live_workers().count(p.pid) == 0) found.push_back(p.pid);
  }
  return found;
}

}  // namespace

std::unique_lock<std::mutex> worker_start_lock() { return std::unique_lock<std::mutex>(start_mutex()); }

void register_worker(pid_t pid) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  live_workers().insert(pid);
}

void unregister_worker(pid_t pid) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  live_workers().erase(pid);
}

void kill_orphaned_descendants() {
  bool disabled = false;
  try {
    disabled = sandbox_part_disabled("reaper");
  } catch (const std::exception&) {
    // A misspelt HARNESS_SANDBOX_DISABLE already failed the worker's start;
    // here, called while a worker is reaped, the sweep simply runs.
  }
  if (disabled) return;
  // Killing a child re-parents its own children to the harness: repeat until
  // a look finds none (bounded, against a fork bomb racing the sweep).
  for (int round = 0; round < 64; ++round) {
    const auto orphans = orphaned_children();
    if (orphans.empty()) return;
    for (const pid_t pid : orphans) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, nullptr, 0) == -1 && errno == EINTR) {
      }
    }
  }
  std::fprintf(stderr, "harness: descendants of a worker were still appearing after 64 rounds of killing\n");
}

void prepare_harness_process() {
  // Not dumpable: /proc/<harness>/mem, environ and maps belong to root and
  // need CAP_SYS_PTRACE, which the workers have dropped. Set on every worker
  // start, so that a test may switch it off and on again.
  ::prctl(PR_SET_DUMPABLE, sandbox_part_disabled("dumpable") ? 1 : 0, 0, 0, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, sandbox_part_disabled("reaper") ? 0 : 1, 0, 0, 0);
}

}  // namespace harness
