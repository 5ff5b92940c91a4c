// Notices that a child process ended even while something else (a
// grandchild it forked) still holds its end of the socket open, so that a
// dead worker is a prompt `crash` instead of a `timeout` many seconds later.
// A pidfd where the kernel has one (Linux 5.3+), else a look with
// waitid(WNOWAIT), which leaves the child for its owner to reap.
#pragma once

#include <sys/types.h>

namespace harness {

class ExitWatch {
 public:
  ExitWatch() = default;
  explicit ExitWatch(pid_t pid);
  ~ExitWatch();
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;

  bool active() const { return pid_ > 0; }
  // A descriptor that poll() reports readable once the process ended; -1
  // when the kernel has no pidfd (then poll in short slices and ask exited()).
  int fd() const { return pidfd_; }
  // Has the process ended (it may not be reaped yet)?
  bool exited() const;

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
};

// How long to poll at most between two calls of exited() when fd() is -1.
constexpr int kExitWatchSliceMs = 50;

}  // namespace harness
