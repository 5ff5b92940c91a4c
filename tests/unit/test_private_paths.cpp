// The run's private folders against the paths a sandboxed child may read
// (harness/sandbox/private_paths.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "harness/core/error.h"
#include "harness/sandbox/landlock_ruleset.h"
#include "harness/sandbox/private_paths.h"
#include "support/test_support.h"

namespace harness {
namespace {

namespace fs = std::filesystem;

struct RunFolders {
  testing::TempFolder root;
  std::string run_folder = root.path("harness-run-1");
  std::string submission = root.path("submissions/softmax_topk/mine");
  RunFolders() {
    fs::create_directories(run_folder + "/other.tensors");
    fs::create_directories(submission);
  }
  SandboxRequest request(const std::string& readable) const {
    SandboxRequest r;
    r.readable = {submission, readable};
    r.writable = run_folder + "/mine.tensors";
    r.private_paths = {run_folder};
    return r;
  }
};

// process-exploit-include-run-folder: "/" among the include folders. The
// grant itself reads the run: without the check, Landlock would allow it.
TEST(PrivatePaths, AReadablePathHoldingTheRunIsRefused) {
  RunFolders run;
  const SandboxRequest asked = run.request("/");
  EXPECT_TRUE(readable_paths(asked).count("/"));
  try {
    refuse_reads_of_private_paths(readable_paths(asked), asked.private_paths);
    FAIL() << "'/' was allowed";
  } catch (const UntrustedInputError& e) {
    EXPECT_NE(std::string(e.what()).find("'/'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(run.run_folder), std::string::npos) << e.what();
  }
  EXPECT_THROW(refuse_reads_of_private_paths(std::set<std::string>{run.root.path("")}, asked.private_paths),
               UntrustedInputError);
}

TEST(PrivatePaths, AReadablePathInsideTheRunIsRefused) {
  RunFolders run;
  EXPECT_THROW(
      refuse_reads_of_private_paths(std::set<std::string>{run.run_folder + "/other.tensors"}, {run.run_folder}),
      UntrustedInputError);
}

TEST(PrivatePaths, ASymbolicLinkIsJudgedByWhereItLeads) {
  RunFolders run;
  const std::string link = run.submission + "/shared";
  fs::create_directory_symlink(run.run_folder, link);
  EXPECT_THROW(refuse_reads_of_private_paths(std::set<std::string>{link}, {run.run_folder}), UntrustedInputError);
}

// A user's PYTHONPATH of /tmp (which holds the run's folders) once failed
// every process submission: the harness's own search paths that overlap a
// private folder are left out instead.
TEST(PrivatePaths, ASearchPathFromTheHarnessEnvironmentOverThePrivateFoldersIsLeftOut) {
  RunFolders run;
  const std::string common = run.root.path("lib");
  const char* old = std::getenv("PYTHONPATH");
  const std::string saved = old ? old : "";
  ::setenv("PYTHONPATH", (run.root.path("") + ":" + common).c_str(), 1);
  const SandboxRequest asked = run.request(run.submission);
  const auto readable = readable_paths(asked);
  if (old) {
    ::setenv("PYTHONPATH", saved.c_str(), 1);
  } else {
    ::unsetenv("PYTHONPATH");
  }
  EXPECT_FALSE(readable.count(run.root.path(""))) << "the root holds the run's folder";
  EXPECT_TRUE(readable.count(common));
  EXPECT_NO_THROW(refuse_reads_of_private_paths(readable, asked.private_paths));
}

TEST(PrivatePaths, FoldersBesideTheRunAndTheirNamesakesAreAllowed) {
  RunFolders run;
  const SandboxRequest asked = run.request(run.root.path("submissions/softmax_topk/common"));
  EXPECT_NO_THROW(refuse_reads_of_private_paths(readable_paths(asked), asked.private_paths));
  // A sibling whose name starts with the run folder's is not inside it.
  EXPECT_NO_THROW(refuse_reads_of_private_paths(std::set<std::string>{run.run_folder + "-other"}, {run.run_folder}));
}

}  // namespace
}  // namespace harness
