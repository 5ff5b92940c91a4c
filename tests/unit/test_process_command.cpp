// Resolving a process submission's command: a program named by path must
// lie in the submission's folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "harness/core/files.h"
#include "harness/submissions/process_command.h"
#include "support/test_support.h"

namespace harness {
namespace {

// A program named by path runs from the submission's own folder: the
// harness's worker named from a submission's folder once had the sandbox
// open the worker's installation, the project, for reading.
TEST(ProcessCommand, AProgramNamedByPathLiesInTheSubmissionsFolder) {
  testing::TempFolder folder;
  std::filesystem::create_directories(folder.path("sub/bin"));
  for (const char* program : {"sub/bin/run", "elsewhere"}) {
    write_file_atomically(folder.path(program), "#!/bin/sh\n");
    std::filesystem::permissions(folder.path(program), std::filesystem::perms::owner_all);
  }
  std::string why;
  const auto own = resolve_process_command({"./bin/run"}, folder.path("sub"), &why);
  ASSERT_TRUE(own.has_value()) << why;
  EXPECT_FALSE(resolve_process_command({"../elsewhere"}, folder.path("sub"), &why).has_value());
  EXPECT_NE(why.find("lies outside the submission's folder"), std::string::npos) << why;
  EXPECT_FALSE(resolve_process_command({folder.path("elsewhere")}, folder.path("sub"), &why).has_value());
}

}  // namespace
}  // namespace harness
