// The peak memory witness: what a call allocates and frees before it
// returns is invisible to a reading after it, and seen here.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "harness/witness/memory_witness.h"
#include "harness/witness/peak_memory.h"

namespace harness {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Scratch of `bytes` touched and given back, as a call materialising a
// score matrix does.
void touch_and_free(size_t bytes, int flags, int fd = -1) {
  void* scratch = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, fd, 0);
  ASSERT_NE(scratch, MAP_FAILED);
  std::memset(scratch, 1, bytes);
  ::munmap(scratch, bytes);
}

TEST(PeakMemory, ScratchFreedBeforeTheReadingIsSeenAtItsPeak) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "resident memory is not meaningful under a sanitizer";
  const auto resident_before = resident_private_bytes(::getpid(), {});
  const std::optional<PeakWindow> window = open_peak_window(::getpid());
  ASSERT_TRUE(window && resident_before);
  touch_and_free(size_t{64} << 20, MAP_PRIVATE | MAP_ANONYMOUS);
  const std::optional<int64_t> growth = peak_growth(*window, 0);
  ASSERT_TRUE(growth);
  EXPECT_GE(*growth, 60 * kMiB);
  EXPECT_LT(*growth, 80 * kMiB);
  // What the memory witness between calls sees: nothing.
  EXPECT_LT(*resident_private_bytes(::getpid(), {}) - *resident_before, 8 * kMiB);
}

TEST(PeakMemory, AWindowStartsFromNowNotFromTheProcesssPast) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "resident memory is not meaningful under a sanitizer";
  touch_and_free(size_t{64} << 20, MAP_PRIVATE | MAP_ANONYMOUS);
  const std::optional<PeakWindow> window = open_peak_window(::getpid());
  ASSERT_TRUE(window);
  ASSERT_TRUE(window->reset) << "this kernel does not let /proc/<pid>/clear_refs reset the peak";
  EXPECT_LT(*peak_growth(*window, 0), 8 * kMiB);
}

// The harness's tensors are shared memory the call maps on first touch: not
// scratch, up to their size; scratch kept in a memory file of the
// submission's own beyond that still counts.
TEST(PeakMemory, SharedMemoryCountsBeyondTheCallsTensors) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "resident memory is not meaningful under a sanitizer";
  const int fd = ::memfd_create("scratch", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 32 * kMiB), 0);
  const std::optional<PeakWindow> window = open_peak_window(::getpid());
  ASSERT_TRUE(window);
  void* mapped = ::mmap(nullptr, size_t{32} << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  std::memset(mapped, 1, size_t{32} << 20);
  EXPECT_LT(*peak_growth(*window, 64 * kMiB), 4 * kMiB);  // as the call's tensors
  EXPECT_GE(*peak_growth(*window, 0), 30 * kMiB);         // as scratch
  EXPECT_GE(*peak_growth(*window, 8 * kMiB), 22 * kMiB);  // beyond the tensors' size
  ::munmap(mapped, size_t{32} << 20);
  ::close(fd);
}

// A process submission's client loads its inputs and builds its outputs:
// one copy of the call's tensors is the contract's, not scratch.
TEST(PeakMemory, ContractCopiesAreNotScratch) {
  if (!memory_witness_meaningful()) GTEST_SKIP() << "resident memory is not meaningful under a sanitizer";
  std::optional<PeakWindow> window = open_peak_window(::getpid());
  ASSERT_TRUE(window);
  window->contract_copies = 1;
  touch_and_free(size_t{48} << 20, MAP_PRIVATE | MAP_ANONYMOUS);
  EXPECT_LT(*peak_growth(*window, 48 * kMiB), 4 * kMiB);
  EXPECT_GE(*peak_growth(*window, 16 * kMiB), 30 * kMiB);
}

}  // namespace
}  // namespace harness
