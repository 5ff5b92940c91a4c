// write_file_atomically when two processes write the same file at once (two
// runs storing this host's peak).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "harness/core/files.h"
#include "support/test_support.h"

namespace harness {
namespace {

TEST(Files, TwoProcessesWritingOneFileEachLeaveAWholeVersion) {
  testing::TempFolder folder;
  const std::string path = folder.path("shared.json");
  const size_t bytes = 256 << 10;
  pid_t writers[2];
  for (int w = 0; w < 2; ++w) {
    writers[w] = ::fork();
    ASSERT_GE(writers[w], 0);
    if (writers[w] == 0) {
      const std::string content(bytes, w == 0 ? 'a' : 'b');
      try {
        for (int i = 0; i < 300; ++i) write_file_atomically(path, content);
      } catch (...) {
        std::_Exit(1);
      }
      std::_Exit(0);
    }
  }
  for (pid_t writer : writers) {
    int status = 0;
    ASSERT_EQ(::waitpid(writer, &status, 0), writer);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a write failed";
  }
  const std::string left = read_text_file(path);
  ASSERT_EQ(left.size(), bytes);
  EXPECT_TRUE(left == std::string(bytes, 'a') || left == std::string(bytes, 'b')) << "versions mixed";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    files += 1;
    EXPECT_EQ(entry.path().string(), path) << "a temporary left behind";
  }
  EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace harness
