// The memory witness of a CPU worker counts from before the submission's
// library loaded, in a worker started for the case: memory a library takes
// while loading, or kept from an earlier case, is no longer outside it. A
// process submission's counts every process of its group and the files it
// keeps in its scratch folder.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "harness/core/processes.h"
#include "harness/executors/worker_executor.h"
#include "harness/witness/memory_witness.h"
#include "support/test_support.h"

namespace harness {
namespace {

const SubmissionRecord* project_submission(const std::string& name) {
  for (const SubmissionRecord& r : testing::project_catalog().records()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(MemoryWitness, AStoreTakenWhileTheLibraryLoadsIsSeenOnlyFromBeforeTheLoad) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "no memory witness in a sanitizer build";
  // cpu-hidden-xhat-preloaded: a constructor takes and fills 64 MiB as the
  // library loads, and the forward keeps xhat there.
  const SubmissionRecord* exploit = project_submission("cpu-hidden-xhat-preloaded");
  ASSERT_NE(exploit, nullptr);
  ASSERT_FALSE(exploit->library.empty()) << "not built: " << exploit->build_log_path;
  testing::TempFolder folder;
  WorkerExecutor executor(
      testing::cpu_worker_target("layernorm_backward", exploit->library, folder.path("worker.log")));

  const std::optional<int64_t> after_load = executor.resident_bytes();  // starts the worker
  const std::optional<int64_t> before_load = executor.resident_before_load();
  ASSERT_TRUE(after_load && before_load);
  EXPECT_GE(*after_load - *before_load, int64_t{64} << 20);
  // Two floats per row of edge.normal.r65536.d64 declared: from a baseline
  // taken after loading (the witness's before) the store is not growth and
  // gets through; from before the load it is far beyond the claim.
  const int64_t claimed = 65536 * 8;
  EXPECT_FALSE(judge_memory(claimed, *after_load, *after_load).understated);
  EXPECT_TRUE(judge_memory(claimed, *before_load, *after_load).understated);

  // The next case runs in a fresh worker, with a baseline of its own.
  executor.begin_case();
  EXPECT_FALSE(executor.resident_before_load().has_value());
  ASSERT_TRUE(executor.resident_bytes().has_value());
  EXPECT_TRUE(executor.resident_before_load().has_value());
  EXPECT_EQ(executor.starts(), 2);
}

// The process exploits of layernorm_backward keep xhat (16 MiB at
// r65536.d64) where a claim of two floats per row does not cover it: in a
// dict of the process, in a forked child, in a file of its scratch folder.
// On a small case, where the store is within the allowance, the first two
// pass: their answers are right, and only the witness stops them on the
// large one (the child holds its own copy of every page of the interpreter
// its parent wrote since the fork, MBs, and is caught on both). NumPy's
// honest submissions pass both: float32-numpy's forward frees 16 MB
// temporaries that glibc keeps in its heap (18 MB held against a claim of
// 0.5 MB) until the Python client's trim gives them back.
TEST(MemoryWitness, AProcessSubmissionsHiddenStoresAreSeenWhereverItKeepsThem) {
  const std::string large = "edge.normal.r65536.d64";
  const std::string small = "edge.normal.r128.d256.eps0.001";
  RunSelection selection;
  selection.challenges = {"layernorm_backward"};
  selection.submissions = {"numpy", "float32-numpy", "process-hidden-xhat", "process-hidden-xhat-child",
                           "process-hidden-xhat-scratch-file"};
  selection.case_ids = {large, small};
  const RunResults results = testing::run_selection(selection, testing::project_catalog());
  for (const std::string name : {"numpy", "float32-numpy"}) {
    const CaseResult& honest = testing::case_of(testing::entry_of(results, name), large);
    EXPECT_EQ(honest.verdict, Verdict::pass) << name << ": " << honest.message;
    EXPECT_EQ(testing::case_of(testing::entry_of(results, name), small).verdict, Verdict::pass) << name;
    ASSERT_TRUE(honest.metrics.contains("witnessed_memory_bytes")) << name;
    EXPECT_LE(honest.metrics["witnessed_memory_bytes"].get<int64_t>(), kMemoryAllowanceBytes) << name;
  }
  for (const std::string name :
       {"process-hidden-xhat", "process-hidden-xhat-child", "process-hidden-xhat-scratch-file"}) {
    const EntryResult& exploit = testing::entry_of(results, name);
    const CaseResult& caught = testing::case_of(exploit, large);
    EXPECT_EQ(caught.verdict, Verdict::understated_memory) << name << ": " << caught.message;
    ASSERT_TRUE(caught.metrics.contains("witnessed_memory_bytes")) << name;
    EXPECT_GE(caught.metrics["witnessed_memory_bytes"].get<int64_t>(), int64_t{65536} * 64 * 4) << name;
    if (name == "process-hidden-xhat-child") continue;
    const CaseResult& within = testing::case_of(exploit, small);
    EXPECT_EQ(within.verdict, Verdict::pass) << name << ": " << within.message;
  }
}

// Memory a forked child holds is in no resident set of its parent: read
// from the leader alone, the store of process-hidden-xhat-child was unseen.
// The group it reads is a plain interpreter's, so this holds in a sanitizer
// build of the harness too.
TEST(MemoryWitness, TheWholeProcessGroupCounts) {
  // A fresh interpreter leads a group of its own and forks a child, which
  // fills 48 MiB on a word from its standard input, says so on its
  // standard output, and ends (the leader with it) when its input closes.
  const char* script =
      "import os, sys\n"
      "if os.fork() == 0:\n"
      "    sys.stdin.buffer.read(1)\n"
      "    store = bytearray(48 << 20)\n"
      "    for i in range(0, len(store), 4096): store[i] = 1\n"
      "    sys.stdout.buffer.write(b'r'); sys.stdout.flush()\n"
      "    sys.stdin.buffer.read(1)\n"
      "    os._exit(0)\n"
      "os.wait()\n";
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  const pid_t leader = ::fork();
  ASSERT_GE(leader, 0);
  if (leader == 0) {
    ::setpgid(0, 0);
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::execl("/usr/bin/python3", "python3", "-c", script, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(leader, leader);
  ::close(to_child[0]);
  ::close(from_child[1]);
  // Both processes exist once the leader's fork is done: wait for two.
  for (int i = 0; i < 500 && processes_in_group(leader).size() < 2; ++i) ::usleep(10000);
  ASSERT_EQ(processes_in_group(leader).size(), 2u);
  const auto own_before = resident_private_bytes(leader, {});
  const auto group_before = group_private_bytes(leader);
  char word = 'g';
  ASSERT_EQ(::write(to_child[1], &word, 1), 1);
  ASSERT_EQ(::read(from_child[0], &word, 1), 1);
  const auto own_after = resident_private_bytes(leader, {});
  const auto group_after = group_private_bytes(leader);
  ::close(to_child[1]);  // the child reads the end of its input and ends
  ::waitpid(leader, nullptr, 0);
  ::close(from_child[0]);
  ASSERT_TRUE(own_before && group_before && own_after && group_after);
  const int64_t store = int64_t{48} << 20;
  EXPECT_LT(*own_after - *own_before, int64_t{4} << 20);  // the leader alone: nothing seen
  EXPECT_GE(*group_after - *group_before, store - (int64_t{2} << 20));
  // Pages the child still shares with the leader count once in the group.
  EXPECT_LT(*group_after - *group_before, store + (int64_t{8} << 20));
}

// A file kept in the scratch folder is memory or disk no resident set
// shows (process-hidden-xhat-scratch-file); links lead nowhere.
TEST(MemoryWitness, FilesKeptInAFolderCountAndLinksDoNot) {
  testing::TempFolder folder;
  {
    std::ofstream kept(folder.path("kept.npy"), std::ios::binary);
    const std::vector<char> block(1 << 20, 7);
    for (int i = 0; i < 8; ++i) kept.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  std::filesystem::create_directory(folder.path("inner"));
  std::filesystem::copy_file(folder.path("kept.npy"), folder.path("inner/copy.npy"));
  std::filesystem::create_symlink("/usr/bin/env", folder.path("elsewhere"));
  const int64_t bytes = folder_bytes(folder.path(""));
  EXPECT_GE(bytes, int64_t{16} << 20);
  EXPECT_LT(bytes, int64_t{17} << 20);
  EXPECT_EQ(folder_bytes(folder.path("missing")), 0);
}

}  // namespace
}  // namespace harness
