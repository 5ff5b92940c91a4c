#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "harness/core/processes.h"

namespace harness {
namespace {

// A child in a process group of its own whose name holds the characters a
// naive reading of /proc/<pid>/stat trips on (spaces and parentheses).
class NamedChild {
 public:
  NamedChild() {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_NAME, "a) 9 (b) S 1 1", 0, 0, 0);
      const char one = 1;
      (void)!::write(ready[1], &one, 1);
      ::pause();
      ::_exit(0);
    }
    char byte = 0;
    ::close(ready[1]);
    EXPECT_EQ(::read(ready[0], &byte, 1), 1);
    ::close(ready[0]);
  }
  ~NamedChild() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

TEST(Processes, AProcessIsListedWithItsParentAndGroupWhateverItsName) {
  const NamedChild child;
  const std::vector<ProcessEntry> all = list_processes();
  const auto it = std::find_if(all.begin(), all.end(), [&](const ProcessEntry& p) { return p.pid == child.pid(); });
  ASSERT_NE(it, all.end());
  EXPECT_EQ(it->parent, ::getpid());
  EXPECT_EQ(it->group, child.pid());
  EXPECT_EQ(processes_in_group(child.pid()), std::vector<pid_t>{child.pid()});
}

}  // namespace
}  // namespace harness
