// A child's log: each case keeps only the tail of what was printed, and the
// file itself is emptied once large, so a submission printing 100 MB per
// call cannot fill the disk over a run (the file once kept everything until
// the run ended).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "harness/ipc/process_log.h"
#include "support/test_support.h"

namespace harness {
namespace {

size_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

// Appends as a child's stderr does (O_APPEND), through its own descriptor.
struct Child {
  explicit Child(const std::string& path) : fd(::open(path.c_str(), O_WRONLY | O_APPEND)) {}
  ~Child() { ::close(fd); }
  void print(const std::string& text) {
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  int fd;
};

TEST(ProcessLog, EachCaseKeepsItsTailAndSaysHowMuchWasNotKept) {
  testing::TempFolder tmp;
  ProcessLog log(tmp.path("worker.log"));
  Child child(log.path());
  child.print(std::string(5000, 'x') + "the end");
  const std::string kept = log.drain(100);
  EXPECT_NE(kept.find("[4907 earlier bytes not kept]"), std::string::npos) << kept;
  EXPECT_NE(kept.find("the end"), std::string::npos);
  child.print("next case");
  EXPECT_EQ(log.drain(100), "next case");
}

TEST(ProcessLog, ALargeLogIsEmptiedAtADrainAndTheChildWritesOnAtItsStart) {
  testing::TempFolder tmp;
  ProcessLog log(tmp.path("worker.log"));
  Child child(log.path());
  child.print(std::string(ProcessLog::kTruncateAtBytes + 10, 'x'));
  EXPECT_EQ(log.drain(10).substr(0, 1), "[");
  EXPECT_EQ(size_of(log.path()), 0u);
  child.print("after");
  EXPECT_EQ(size_of(log.path()), 5u);  // appended at the new end, no hole before it
  EXPECT_EQ(log.drain(100), "after");
}

}  // namespace
}  // namespace harness
