#include "harness/ipc/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "harness/core/clock.h"
#include "harness/core/error.h"

namespace harness {

namespace {

// In the child (async-signal-safe): "<step> (errno N)" on the start pipe and
// on stderr, then exit without running the submission.
[[noreturn]] void refuse_to_run_uncontained(int report_fd, const char* failed) {
  const int error = errno;
  char line[160];
  size_t n = 0;
  for (const char* c = failed; *c && n < 100; ++c) line[n++] = *c;
  const char middle[] = " (errno ";
  for (const char* c = middle; *c; ++c) line[n++] = *c;
  char digits[12];
  size_t d = 0;
  for (int v = error > 0 ? error : 0; d == 0 || v > 0; v /= 10) digits[d++] = static_cast<char>('0' + v % 10);
  while (d > 0) line[n++] = digits[--d];
  line[n++] = ')';
  (void)!::write(report_fd, line, n);
  const char prefix[] = "harness: could not contain the worker, so it does not run: ";
  (void)!::write(2, prefix, sizeof prefix - 1);
  (void)!::write(2, line, n);
  (void)!::write(2, "\n", 1);
  ::_exit(124);
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (ended_by_sandbox(status)) {
      return fmt::format("was killed by signal {} ({}): it made a system call the sandbox forbids", sig,
                         ::strsignal(sig));
    }
    return fmt::format("was killed by signal {} ({})", sig, ::strsignal(sig));
  }
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return fmt::format("ended with wait status {}", status);
}

WorkerProcess::WorkerProcess(const WorkerLaunch& launch) {
  PreparedSandbox sandbox(launch.sandbox);
  // The child reports a failure to contain itself on this pipe; a successful
  // exec closes it (close-on-exec), so end-of-file means the child runs
  // contained. Such a failure is the harness's, not the submission's.
  int start_report[2];
  HARNESS_CHECK_ERRNO(::pipe2(start_report, O_CLOEXEC), "pipe for a worker's start");
  start_report[1] = keep_clear_of_standard_fds(start_report[1]);
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) == -1) {
    const int saved = errno;
    ::close(start_report[0]);
    ::close(start_report[1]);
    errno = saved;
    HARNESS_CHECK_ERRNO(-1, "socketpair for a worker");
  }
  const int log_fd = ::open(launch.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd == -1) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    ::close(start_report[0]);
    ::close(start_report[1]);
    HARNESS_CHECK_ERRNO(-1, "opening the worker log '{}'", launch.log_path);
  }
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls are allowed.
  std::vector<std::string> args{launch.executable};
  args.insert(args.end(), launch.arguments.begin(), launch.arguments.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> added = launch.environment;
  for (const auto& entry : sandbox_environment()) added.push_back(entry);
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(added.begin(), added.end(),
                                      [&](const std::string& extra) { return extra.rfind(name + "=", 0) == 0; });
    if (!replaced) environment.push_back(entry);
  }
  environment.insert(environment.end(), added.begin(), added.end());
  std::vector<char*> envp;
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const char* directory = launch.working_directory.empty() ? nullptr : launch.working_directory.c_str();
  const bool stdio = launch.protocol_on_stdio;
  const int fd3 = stdio ? launch.fd3 : -1;
  const pid_t parent = ::getpid();

  std::unique_lock<std::mutex> starting = worker_start_lock();
  pid_ = ::fork();
  if (pid_ == -1) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    ::close(log_fd);
    ::close(start_report[0]);
    ::close(start_report[1]);
    HARNESS_CHECK_ERRNO(-1, "fork of a worker");
  }
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);
    if (directory && ::chdir(directory) != 0) ::_exit(126);
    ::dup2(log_fd, 2);
    if (stdio) {
      ::dup2(sockets[1], 0);
      ::dup2(sockets[1], 1);
      if (fd3 == 3) {
        ::fcntl(3, F_SETFD, 0);
      } else if (fd3 >= 0) {
        ::dup2(fd3, 3);
      }
    } else {
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd >= 0) ::dup2(null_fd, 0);
      ::dup2(log_fd, 1);
      if (sockets[1] == 3) {
        ::fcntl(3, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
      } else {
        ::dup2(sockets[1], 3);
      }
    }
    if (const char* failed = sandbox.apply_in_child()) refuse_to_run_uncontained(start_report[1], failed);
    ::execvpe(argv[0], argv.data(), envp.data());
    const char message[] = "harness: exec of the submission's command failed\n";
    (void)!::write(2, message, sizeof message - 1);
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // also from the parent: whichever runs first wins the race
  register_worker(pid_);
  starting.unlock();
  sandbox.release_parent_copies();
  ::close(sockets[1]);
  ::close(log_fd);
  ::close(start_report[1]);
  char failure[256] = {};
  ssize_t got = 0;
  while ((got = ::read(start_report[0], failure, sizeof failure - 1)) == -1 && errno == EINTR) {
  }
  ::close(start_report[0]);
  if (got > 0) {
    ::close(sockets[0]);
    kill_and_reap();
    HARNESS_FAIL("could not contain a worker for '{}', so it was not run: {} failed in the child", launch.executable,
                 std::string(failure, static_cast<size_t>(got)));
  }
  socket_fd_ = sockets[0];
  channel_ = std::make_unique<Channel>(sockets[0]);
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_) kill_and_reap();
}

std::optional<std::string> WorkerProcess::wait_exit(double timeout_s) {
  if (reaped_) return ending_;
  const int64_t deadline = monotonic_ns() + static_cast<int64_t>(timeout_s * 1e9);
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      finish(status);
      return ending_;
    }
    if (r == -1 && errno != EINTR) {
      reaped_ = true;
      unregister_worker(pid_);
      ending_ = fmt::format("could not be waited for: {}", std::strerror(errno));
      return ending_;
    }
    if (monotonic_ns() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string WorkerProcess::kill_and_reap() {
  if (reaped_) return ending_;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) == -1 && errno == EINTR) {
  }
  finish(status);
  return ending_;
}

void WorkerProcess::finish(int status) {
  reaped_ = true;
  status_ = status;
  ending_ = describe_wait_status(status);
  unregister_worker(pid_);
  ::kill(-pid_, SIGKILL);       // children the submission may have left behind in its group
  kill_orphaned_descendants();  // and those that left the group (re-parented to the harness)
}

}  // namespace harness
