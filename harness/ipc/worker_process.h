// A child process that runs submission code: started with fork/exec in its
// own process group, dying with the harness (PR_SET_PDEATHSIG), contained by
// harness/sandbox between fork and exec. Its socket to the harness is fd 3
// (harness-worker) or its stdin and stdout (a process submission); stderr,
// and stdout when it is not the protocol, are appended to a log file.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/ipc/channel.h"
#include "harness/sandbox/sandbox.h"

namespace harness {

struct WorkerLaunch {
  std::string executable;              // a path, or a name looked up on PATH
  std::vector<std::string> arguments;  // without argv[0]
  std::string log_path;
  std::string working_directory;         // empty: the harness's
  std::vector<std::string> environment;  // "NAME=value" added to (or replacing in) the harness's
  bool protocol_on_stdio = false;        // the socket becomes stdin and stdout instead of fd 3
  // With protocol_on_stdio: a descriptor of the harness's that becomes the
  // child's fd 3 (a process submission's memory socket); -1 for none. The
  // caller keeps and closes its own copy.
  int fd3 = -1;
  SandboxRequest sandbox;  // what it may read and write besides the system
};

class WorkerProcess {
 public:
  explicit WorkerProcess(const WorkerLaunch& launch);
  ~WorkerProcess();  // kills and reaps a worker still running
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Channel& channel() { return *channel_; }
  // The socket, for protocols other than Channel's framing.
  int socket_fd() const { return socket_fd_; }
  pid_t pid() const { return pid_; }

  // Waits up to timeout_s for the worker to exit on its own; returns how it
  // ended, or nullopt if it is still running.
  std::optional<std::string> wait_exit(double timeout_s);
  // Kills the whole process group and reaps the worker; returns how it ended.
  std::string kill_and_reap();
  // It was killed for a system call the sandbox forbids (SIGSYS).
  bool ended_by_sandbox() const { return reaped_ && harness::ended_by_sandbox(status_); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  void finish(int status);
  std::string ending_;
  std::unique_ptr<Channel> channel_;
  int socket_fd_ = -1;
};

// "was killed by signal 11 (Segmentation fault)", "exited with code 3".
std::string describe_wait_status(int status);

}  // namespace harness
