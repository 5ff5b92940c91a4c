// A worker child process: started with fork/exec in its own process group,
// with the channel's socket as fd 3, stdin from /dev/null and stdout/stderr
// appended to a log file. It dies with the harness (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/ipc/channel.h"

namespace harness {

struct WorkerLaunch {
  std::string executable;
  std::vector<std::string> arguments;  // without argv[0]
  std::string log_path;
};

class WorkerProcess {
 public:
  explicit WorkerProcess(const WorkerLaunch& launch);
  ~WorkerProcess();  // kills and reaps a worker still running
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Channel& channel() { return *channel_; }
  pid_t pid() const { return pid_; }

  // Waits up to timeout_s for the worker to exit on its own; returns how it
  // ended, or nullopt if it is still running.
  std::optional<std::string> wait_exit(double timeout_s);
  // Kills the whole process group and reaps the worker; returns how it ended.
  std::string kill_and_reap();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string ending_;
  std::unique_ptr<Channel> channel_;
};

// "was killed by signal 11 (Segmentation fault)", "exited with code 3".
std::string describe_wait_status(int status);

}  // namespace harness
