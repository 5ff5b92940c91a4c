// The memory witness: a worker's resident memory as the harness reads it
// (anonymous memory, shared mappings, memory files held open, the
// harness's own tensor files apart) and the judgement of a claim against it.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "harness/memory/shared_buffer.h"
#include "harness/witness/memory_witness.h"

namespace harness {
namespace {

// cpu-hidden-xhat-shared keeps its hidden store in a shared mapping: not
// anonymous memory, so RssAnon alone never saw it.
TEST(MemoryWitness, SharedMappingsCountButTheHarnessFilesDoNot) {
  const size_t bytes = size_t{64} << 20;
  const auto anonymous_before = resident_anonymous_bytes(::getpid());
  const auto before = resident_private_bytes(::getpid(), {});
  ASSERT_TRUE(anonymous_before && before);
  void* shared = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  std::memset(shared, 1, bytes);
  const int fd = ::memfd_create("harness-buffer", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(bytes)), 0);
  void* tensor = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(tensor, MAP_FAILED);
  std::memset(tensor, 1, bytes);
  struct stat file {};
  ASSERT_EQ(::fstat(fd, &file), 0);

  const auto anonymous_after = resident_anonymous_bytes(::getpid());
  const auto after = resident_private_bytes(::getpid(), {static_cast<uint64_t>(file.st_ino)});
  ASSERT_TRUE(anonymous_after && after);
  EXPECT_LT(*anonymous_after - *anonymous_before, int64_t{8} << 20);  // unseen by RssAnon alone
  EXPECT_GE(*after - *before, int64_t{60} << 20);                     // the shared mapping
  EXPECT_LT(*after - *before, int64_t{100} << 20);                    // not the harness's file
  ::munmap(tensor, bytes);
  ::munmap(shared, bytes);
  ::close(fd);
}

// A memory file written and never mapped (cpu-hidden-xhat-memfd-file, where
// seccomp lets it make one) is in no resident set: the witness counts the
// memory files a process holds open, the harness's own apart.
TEST(MemoryWitness, MemoryFilesHeldOpenCount) {
  const size_t bytes = size_t{32} << 20;
  const auto before = resident_private_bytes(::getpid(), {});
  ASSERT_TRUE(before);
  const int fd = ::memfd_create("kept", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::vector<char> block(1 << 20, 7);
  for (size_t at = 0; at < bytes; at += block.size()) {
    ASSERT_EQ(::pwrite(fd, block.data(), block.size(), static_cast<off_t>(at)), static_cast<ssize_t>(block.size()));
  }
  struct stat file {};
  ASSERT_EQ(::fstat(fd, &file), 0);
  const auto anonymous = resident_anonymous_bytes(::getpid());
  const auto held = resident_private_bytes(::getpid(), {});
  const auto as_harness_file = resident_private_bytes(::getpid(), {static_cast<uint64_t>(file.st_ino)});
  ::close(fd);
  ASSERT_TRUE(anonymous && held && as_harness_file);
  EXPECT_GE(*held - *before, int64_t{30} << 20);
  EXPECT_LT(*as_harness_file - *before, int64_t{8} << 20);
}

// cpu-hidden-xhat-tensor-file grew one of the harness's tensor files to keep
// memory past its end: the files are sealed at their size.
TEST(MemoryWitness, TheHarnessTensorFilesCannotGrow) {
  SharedBuffer buffer(1, 4096);
  EXPECT_NE(::ftruncate(buffer.fd(), static_cast<off_t>(buffer.total_bytes() + (1 << 20))), 0);
  const char byte = 1;
  EXPECT_NE(::pwrite(buffer.fd(), &byte, 1, static_cast<off_t>(buffer.total_bytes())), 1);
}

TEST(MemoryWitness, ReadsThisProcessResidentMemoryGrowing) {
  const auto before = resident_anonymous_bytes(::getpid());
  ASSERT_TRUE(before.has_value());
  std::vector<char> held(64 << 20);
  std::memset(held.data(), 1, held.size());
  const auto after = resident_anonymous_bytes(::getpid());
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(*after - *before, int64_t{60} << 20);
  EXPECT_FALSE(resident_anonymous_bytes(-1).has_value());
}

// cpu-hidden-xhat: 2 floats per row declared (8192 rows: 64 KiB) while xhat
// of 8192 x 4096 floats is held.
TEST(MemoryWitness, HiddenStoreIsUnderstatedAnHonestOneIsNot) {
  const int64_t baseline = int64_t{30} << 20;
  const MemoryJudgement hidden = judge_memory(8192 * 8, baseline, baseline + int64_t{8192} * 4096 * 4);
  EXPECT_TRUE(hidden.understated);
  EXPECT_NE(hidden.message.find("65536"), std::string::npos) << hidden.message;
  EXPECT_NE(hidden.message.find("134217728"), std::string::npos) << hidden.message;
  // A cache reporting its 100 MB pool, holding it and 10 MB besides.
  EXPECT_FALSE(judge_memory(int64_t{100} << 20, baseline, baseline + (int64_t{110} << 20)).understated);
  // Memory given back below the baseline is no growth.
  EXPECT_EQ(judge_memory(0, baseline, baseline - 1000).witnessed, 0);
}

}  // namespace
}  // namespace harness
