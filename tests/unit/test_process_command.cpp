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

// The interpreter chosen imports NumPy and every module the manifest names
// (its arrays and imports); where none does, the reason names them.
TEST(ProcessCommand, ThePythonChosenImportsWhatTheManifestNames) {
  if (testing::run_shell("/usr/bin/python3 -c 'import numpy'").exit_code != 0) {
    GTEST_SKIP() << "python3-numpy is not installed (scripts/install-deps.sh installs it)";
  }
  testing::TempFolder folder;
  std::string why;
  const auto plain = resolve_process_command({"python3", "a.py"}, folder.path(""), &why, {"json", "zlib"});
  ASSERT_TRUE(plain.has_value()) << why;
  EXPECT_NE(plain->note.find("python: /"), std::string::npos) << plain->note;
  EXPECT_FALSE(
      resolve_process_command({"python3", "a.py"}, folder.path(""), &why, {"torch_not_here_xq", "json"}).has_value());
  EXPECT_NE(why.find("no python3 that can import numpy, torch_not_here_xq, json (tried "), std::string::npos) << why;
  testing::ScopedEnv chosen("HARNESS_PYTHON", "/usr/bin/python3");
  EXPECT_FALSE(resolve_process_command({"python3", "a.py"}, folder.path(""), &why, {"torch_not_here_xq"}).has_value());
  EXPECT_NE(why.find("HARNESS_PYTHON=/usr/bin/python3 cannot import numpy, torch_not_here_xq"), std::string::npos)
      << why;
}

}  // namespace
}  // namespace harness
