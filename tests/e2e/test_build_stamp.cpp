// cmake/build_stamp.cmake, the build step that names the commit a build is
// compiled from (run.git_commit), run on a repository of its own.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "harness/core/build_stamp.h"
#include "harness/core/files.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::run_shell;
using testing::TempFolder;

// Runs the stamp step on `source` and returns the commit it wrote.
std::string stamp(const std::string& source, const std::string& output) {
  const auto r = run_shell(fmt::format("cmake -DSOURCE_DIR='{}' -DOUTPUT='{}' -P '{}/cmake/build_stamp.cmake'", source,
                                       output, HARNESS_SOURCE_DIR));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string text = read_text_file(output);
  const std::string opening = "return \"";
  const size_t start = text.find(opening);
  const size_t end = start == std::string::npos ? start : text.find('"', start + opening.size());
  EXPECT_NE(end, std::string::npos) << text;
  return end == std::string::npos ? "" : text.substr(start + opening.size(), end - start - opening.size());
}

// 40 lowercase hex digits: a full commit id. (No std::regex: GCC 12 warns
// inside its own regex code in the sanitizer build.)
bool is_commit_id(const std::string& text) {
  return text.size() == 40 &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
}

int64_t modified_ns(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

TEST(BuildStamp, NamesTheCommitOfItsSourceAndSaysWhenTrackedFilesChanged) {
  // A build from an exported tree needs no git (its stamp says "unknown"),
  // and neither does the rest of the suite.
  if (run_shell("git --version").exit_code != 0) GTEST_SKIP() << "git is not installed: the stamp step cannot be tried";
  TempFolder tmp;
  const std::string repo = tmp.path("repo"), out = tmp.path("stamp.cpp");
  const auto init = run_shell(fmt::format(
      "git init -q '{0}' && echo a > '{0}/tracked' && git -C '{0}' add tracked && "
      "git -C '{0}' -c user.name=test -c user.email=test@example.com commit -qm one && git -C '{0}' rev-parse HEAD",
      repo));
  ASSERT_EQ(init.exit_code, 0) << init.output;
  const std::string head = init.output.substr(0, init.output.find('\n'));
  ASSERT_TRUE(is_commit_id(head)) << init.output;

  EXPECT_EQ(stamp(repo, out), head);
  // Unchanged, the file keeps its time: nothing is recompiled.
  const int64_t written = modified_ns(out);
  ASSERT_EQ(run_shell("sleep 0.05").exit_code, 0);
  EXPECT_EQ(stamp(repo, out), head);
  EXPECT_EQ(modified_ns(out), written);
  // An untracked file is not a change of the source; an edited tracked one is.
  ASSERT_EQ(run_shell(fmt::format("echo b > '{}/untracked'", repo)).exit_code, 0);
  EXPECT_EQ(stamp(repo, out), head);
  ASSERT_EQ(run_shell(fmt::format("echo b >> '{}/tracked'", repo)).exit_code, 0);
  EXPECT_EQ(stamp(repo, out), head + "-dirty");
  // Outside a checkout there is no commit to name.
  ASSERT_EQ(run_shell(fmt::format("mkdir '{}'", tmp.path("plain"))).exit_code, 0);
  EXPECT_EQ(stamp(tmp.path("plain"), out), "unknown");
}

// Results name the commit of the binaries that wrote them, stamped at build.
TEST(BuildStamp, ARunRecordsTheCommitItsHarnessWasBuiltFrom) {
  TempFolder tmp;
  const auto r = testing::run_cli(
      "run softmax_topk -s cpu-fast --device cpu -q --case correctness.normal.r64.v1024.k10 -o " + tmp.path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string recorded = nlohmann::json::parse(read_text_file(tmp.path("r.json")))["run"]["git_commit"];
  EXPECT_EQ(recorded, built_from_commit());
  const std::string dirty = "-dirty";
  const bool marked_dirty =
      recorded.size() > dirty.size() && recorded.compare(recorded.size() - dirty.size(), dirty.size(), dirty) == 0;
  EXPECT_TRUE(recorded == "unknown" ||
              is_commit_id(marked_dirty ? recorded.substr(0, recorded.size() - dirty.size()) : recorded))
      << recorded;
}

}  // namespace
}  // namespace harness
