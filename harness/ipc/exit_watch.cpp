#include "harness/ipc/exit_watch.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness {

ExitWatch::ExitWatch(pid_t pid) : pid_(pid) {
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
}

ExitWatch::~ExitWatch() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool ExitWatch::exited() const {
  if (pid_ <= 0) return false;
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;  // gone already
  return info.si_pid != 0;
}

}  // namespace harness
