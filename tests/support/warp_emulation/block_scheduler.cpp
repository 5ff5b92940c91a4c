// The warp emulator's scheduler: a launch runs block by block; each thread
// of a block is a fiber (fiber.h) on a stack of its own, resumed in turn
// until it waits at a collective. A warp's collective proceeds once all 32
// lanes wait at the same one (the same kind, their same count of
// collectives so far); __syncthreads once every thread that has not exited
// waits there. Anything else (lanes at different collectives, a barrier
// some threads never reach) is the launch's failure, named by block, warp
// and lanes, not a hang.
//
// Operands of a warp collective go to one of two slots by the parity of the
// count: a lane that has read its result and gone on to the next collective
// writes the other slot, and cannot reach a third before every lane has
// read the first.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "warp_emulation/fiber.h"
#include "warp_emulation/mma_model.h"
#include "warp_emulation/stand_in/cuda_runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#define WARP_EMULATION_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WARP_EMULATION_ASAN 1
#endif
#endif
#ifdef WARP_EMULATION_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace warp_emulation {
namespace {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr size_t kStackBytes = size_t{256} << 10;

enum class State { runnable, at_block_barrier, at_warp_collective, exited };
enum class Collective { shuffle, mma, syncwarp };

const char* name_of(Collective c) {
  switch (c) {
    case Collective::shuffle: return "a shuffle";
    case Collective::mma: return "an mma";
    case Collective::syncwarp: return "__syncwarp";
  }
  return "?";
}

struct Thread {
  Fiber fiber;
  State state = State::runnable;
  bool barrier_predicate = false;  // its __syncthreads_count's
  Collective collective = Collective::shuffle;
  uint64_t collectives = 0;  // warp collectives entered so far
  void* fake_stack = nullptr;
};

struct Warp {
  uint32_t shuffled[2][kWarpSize];
  MmaOperands mma[2][kWarpSize];
};

// Fiber stacks, each above a guard page: an overflow faults where it
// happens instead of writing into the next thread's stack.
class Stacks {
 public:
  explicit Stacks(int count) : count_(count), page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    void* p =
        mmap(nullptr, slot() * count_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("mmap of the fiber stacks", slot() * count_);
    memory_ = static_cast<char*>(p);
    for (int i = 0; i < count_; ++i)
      if (mprotect(memory_ + slot() * i, page_, PROT_NONE) != 0) die("mprotect of a stack's guard page", page_);
  }
  ~Stacks() {
#ifdef WARP_EMULATION_ASAN
    // AddressSanitizer keeps a stack frame's redzones in the shadow of
    // memory unmapped under it: a buffer mapped there later (a worker's
    // shared tensor) would read as a stack overflow.
    __asan_unpoison_memory_region(memory_, slot() * count_);
#endif
    munmap(memory_, slot() * count_);
  }
  int count() const { return count_; }
  // Gives the pages back: what a launch left on its threads' stacks is not
  // the memory of the code that launched it.
  void release() { madvise(memory_, slot() * count_, MADV_DONTNEED); }
  Stacks(const Stacks&) = delete;
  Stacks& operator=(const Stacks&) = delete;
  char* base(int i) const { return memory_ + slot() * i + page_; }

 private:
  size_t slot() const { return page_ + kStackBytes; }
  [[noreturn]] static void die(const char* call, size_t bytes) {
    std::fprintf(stderr, "warp emulation: %s (%zu bytes) failed: %s\n", call, bytes, std::strerror(errno));
    std::abort();
  }
  int count_;
  size_t page_;
  char* memory_ = nullptr;
};

// One set of stacks serves every launch, grown to the largest block so far:
// mapping and guarding a stack per thread at each launch cost more than
// small launches' work.
Stacks& stacks_for(int threads) {
  static std::unique_ptr<Stacks> stacks;
  if (!stacks || stacks->count() < threads) {
    stacks.reset();
    stacks = std::make_unique<Stacks>(threads);
  }
  return *stacks;
}

struct Launch {
  explicit Launch(int n, const std::function<void()>& kernel_body)
      : body(kernel_body), threads(n), warps((n + kWarpSize - 1) / kWarpSize), stacks(stacks_for(n)) {}
  const std::function<void()>& body;
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  Stacks& stacks;
  Fiber scheduler;
  int current = -1;
  std::string failure;
  int barrier_count = 0;  // of the barrier last released
  void* scheduler_fake_stack = nullptr;
  const void* scheduler_stack_bottom = nullptr;
  size_t scheduler_stack_size = 0;
};

Launch* g_launch = nullptr;
Schedule g_schedule = Schedule::lockstep;
std::string g_last_failure;
cudaError_t g_last_error = cudaSuccess;
std::map<uintptr_t, size_t> g_shared_opt_in;
constexpr size_t g_shared_bytes = kMaxDynamicSharedBytes;
// Mapped, not static: its pages go back after each launch, as the stacks'.
unsigned char* const g_shared = [] {
  void* p = mmap(nullptr, g_shared_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "warp emulation: mmap of %zu bytes of shared memory failed: %s\n", g_shared_bytes,
                 std::strerror(errno));
    std::abort();
  }
  return static_cast<unsigned char*>(p);
}();
// Checked after each block, past the launch's dynamic shared memory.
constexpr size_t kSharedWatchBytes = 4096;

// AddressSanitizer follows a switch of stacks only when told of it.
void start_switch(void** fake_stack_save, const void* bottom, size_t size) {
#ifdef WARP_EMULATION_ASAN
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
#else
  (void)fake_stack_save, (void)bottom, (void)size;
#endif
}

void finish_switch(void* fake_stack_save, const void** bottom_old, size_t* size_old) {
#ifdef WARP_EMULATION_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, size_old);
#else
  (void)fake_stack_save, (void)bottom_old, (void)size_old;
#endif
}

Launch& launch_of_caller(const char* what) {
  if (g_launch == nullptr || g_launch->current < 0) {
    std::fprintf(stderr, "warp emulation: %s called outside an emulated kernel\n", what);
    std::abort();
  }
  return *g_launch;
}

// The calling fiber waits: back to the scheduler, on until it is resumed.
void wait_for_scheduler() {
  Launch& l = *g_launch;
  Thread& t = l.threads[l.current];
  start_switch(&t.fake_stack, l.scheduler_stack_bottom, l.scheduler_stack_size);
  switch_fiber(t.fiber, l.scheduler);
  finish_switch(t.fake_stack, &l.scheduler_stack_bottom, &l.scheduler_stack_size);
}

[[noreturn]] void leave_for_good() {
  Launch& l = *g_launch;
  start_switch(nullptr, l.scheduler_stack_bottom, l.scheduler_stack_size);
  switch_fiber(l.threads[l.current].fiber, l.scheduler);
  std::abort();
}

// "block 3", or "block (3, 1)" in a grid of more than one dimension.
std::string block_name() {
  if (gridDim.y == 1 && gridDim.z == 1) return "block " + std::to_string(blockIdx.x);
  std::string name = "block (" + std::to_string(blockIdx.x) + ", " + std::to_string(blockIdx.y);
  if (gridDim.z > 1) name += ", " + std::to_string(blockIdx.z);
  return name + ")";
}

std::string where(const Launch& l) {
  const int t = l.current;
  return block_name() + ", thread " + std::to_string(t) + " (warp " + std::to_string(t / kWarpSize) + ", lane " +
         std::to_string(t % kWarpSize) + ")";
}

// Thrown where device code fails, to unwind the thread's stack to
// thread_main: a fiber that switched away for good from deep in a kernel
// would leave its frames' objects (the failure's own message among them)
// never destroyed.
struct KernelFailed {};

[[noreturn]] void fail_in_kernel(const std::string& why) {
  Launch& l = *g_launch;
  if (l.failure.empty()) l.failure = why + " in " + where(l);
  throw KernelFailed{};
}

// The kernel's body, on the calling fiber; every object it made is gone
// when it returns.
void run_body(Launch& l) {
  std::string exception;
  try {
    l.body();
    return;
  } catch (const KernelFailed&) {
    return;
  } catch (const std::exception& e) {
    exception = e.what();
  } catch (...) {
    exception = "not a std::exception";
  }
  if (l.failure.empty()) l.failure = "an exception (" + exception + ") in " + where(l);
}

void thread_main() {
  Launch& l = *g_launch;
  finish_switch(nullptr, &l.scheduler_stack_bottom, &l.scheduler_stack_size);
  run_body(l);
  l.threads[l.current].state = State::exited;
  leave_for_good();
}

void resume(Launch& l, int t) {
  l.current = t;
  const unsigned linear = static_cast<unsigned>(t);
  threadIdx = uint3{linear % blockDim.x, linear / blockDim.x % blockDim.y, linear / (blockDim.x * blockDim.y)};
  Thread& th = l.threads[t];
  start_switch(&l.scheduler_fake_stack, l.stacks.base(t), kStackBytes);
  switch_fiber(l.scheduler, th.fiber);
  finish_switch(l.scheduler_fake_stack, nullptr, nullptr);
  l.current = -1;
}

// "threads 0-31 wait at __syncthreads, 32-63 have exited": runs of equal
// states among [first, last).
std::string describe(const Launch& l, int first, int last) {
  auto state_of = [&](int t) {
    const Thread& th = l.threads[t];
    switch (th.state) {
      case State::runnable: return std::string("run");
      case State::at_block_barrier: return std::string("wait at __syncthreads");
      case State::exited: return std::string("have exited");
      case State::at_warp_collective:
        return std::string("wait at ") + name_of(th.collective) + " (their collective #" +
               std::to_string(th.collectives + 1) + ")";
    }
    return std::string("?");
  };
  std::string out;
  for (int t = first; t < last;) {
    const std::string s = state_of(t);
    int end = t + 1;
    while (end < last && state_of(end) == s) ++end;
    if (!out.empty()) out += ", ";
    out += std::to_string(t - first) + (end - 1 > t ? "-" + std::to_string(end - 1 - first) : "") + " " + s;
    t = end;
  }
  return out;
}

// Releases warp `first / 32` when its lanes all wait at one collective:
// true if it did, false if none waits at one; a failure when only some do
// (once no lane of it can run, they never will).
bool release_warp(Launch& l, int first, std::string* failure) {
  const int last = std::min(static_cast<int>(l.threads.size()), first + kWarpSize);
  int waiting = 0;
  for (int t = first; t < last; ++t) waiting += l.threads[t].state == State::at_warp_collective;
  if (waiting == 0) return false;
  bool same = waiting == last - first;
  for (int t = first; same && t < last; ++t) {
    same = l.threads[t].collective == l.threads[first].collective &&
           l.threads[t].collectives == l.threads[first].collectives;
  }
  if (!same) {
    *failure = "the lanes of warp " + std::to_string(first / kWarpSize) + " of " + block_name() +
               " are not at the same collective: lanes " + describe(l, first, last);
    return false;
  }
  for (int t = first; t < last; ++t) l.threads[t].state = State::runnable;
  return true;
}

// Releases the block barrier once every thread still running waits there.
bool release_block(Launch& l) {
  bool all_at_barrier = true, any_at_barrier = false;
  for (const Thread& t : l.threads) {
    any_at_barrier |= t.state == State::at_block_barrier;
    all_at_barrier &= t.state == State::at_block_barrier || t.state == State::exited;
  }
  if (!any_at_barrier || !all_at_barrier) return false;
  l.barrier_count = 0;
  for (Thread& t : l.threads) {
    if (t.state != State::at_block_barrier) continue;
    l.barrier_count += t.barrier_predicate;
    t.state = State::runnable;
  }
  return true;
}

// Runs the lanes of the warp from `first` that can run, each to its next wait.
// In the descending schedule the lanes run from the last: a lane that reads
// what lane 0 wrote, with no __syncwarp between, reads it before it is
// written.
bool run_warp(Launch& l, int first) {
  const int last = std::min(static_cast<int>(l.threads.size()), first + kWarpSize);
  const bool descending = g_schedule == Schedule::warp_by_warp_descending;
  for (int i = first; i < last; ++i) {
    const int t = descending ? first + last - 1 - i : i;
    if (l.threads[t].state != State::runnable) continue;
    resume(l, t);
    if (!l.failure.empty()) return false;
  }
  return true;
}

// A fresh fiber for thread t, to start at thread_main. Under
// AddressSanitizer its stack is unpoisoned first: a thread that failed left
// its frames' redzones behind, and the stack serves the next block.
void start_fiber(Launch& l, int t) {
  Thread& th = l.threads[t];
  th = Thread{};
#ifdef WARP_EMULATION_ASAN
  __asan_unpoison_memory_region(l.stacks.base(t), kStackBytes);
#endif
  prepare_fiber(th.fiber, l.stacks.base(t), kStackBytes, thread_main);
}

// Runs one block to its end; false when it failed (l.failure says why).
bool run_block(Launch& l) {
  const int n = static_cast<int>(l.threads.size());
  for (int t = 0; t < n; ++t) start_fiber(l, t);
  const int warps = (n + kWarpSize - 1) / kWarpSize;
  for (;;) {
    for (int i = 0; i < warps; ++i) {
      const int first = (g_schedule == Schedule::warp_by_warp_descending ? warps - 1 - i : i) * kWarpSize;
      // Lockstep: each warp one collective a round. Warp by warp: a warp
      // goes on alone until it waits at the block barrier or exits.
      for (;;) {
        if (!run_warp(l, first)) return false;
        if (g_schedule == Schedule::lockstep || !release_warp(l, first, &l.failure)) break;
      }
      if (!l.failure.empty()) return false;
    }
    if (std::all_of(l.threads.begin(), l.threads.end(), [](const Thread& t) { return t.state == State::exited; }))
      return true;
    bool released = false;
    for (int first = 0; first < n; first += kWarpSize) {
      released |= release_warp(l, first, &l.failure);
      if (!l.failure.empty()) return false;
    }
    if (!released) released = release_block(l);
    if (!released) {
      l.failure = block_name() + " can go no further: threads " + describe(l, 0, n);
      return false;
    }
  }
}

// The caller's warp, lane and slot for its next collective, whose operands
// it then writes before wait_at_collective.
struct Seat {
  Warp& warp;
  int lane;
  int slot;
};

Seat seat_of_caller(const char* what, unsigned mask, int width) {
  Launch& l = launch_of_caller(what);
  if (mask != kFullMask) fail_in_kernel(std::string(what) + " with a partial mask (not emulated)");
  if (width != kWarpSize)
    fail_in_kernel(std::string(what) + " with width " + std::to_string(width) + " (not emulated)");
  const int t = l.current;
  return Seat{l.warps[t / kWarpSize], t % kWarpSize, static_cast<int>(l.threads[t].collectives % 2)};
}

void wait_at_collective(Collective kind) {
  Launch& l = *g_launch;
  Thread& t = l.threads[l.current];
  t.collective = kind;
  t.state = State::at_warp_collective;
  wait_for_scheduler();
  ++t.collectives;
}

}  // namespace

void sync_block() { sync_block_count(false); }

int sync_block_count(bool predicate) {
  Launch& l = launch_of_caller("__syncthreads");
  l.threads[l.current].barrier_predicate = predicate;
  l.threads[l.current].state = State::at_block_barrier;
  wait_for_scheduler();
  // Every thread reads the count as it resumes, before any can reach the
  // next barrier and set it again.
  return g_launch->barrier_count;
}

void sync_warp(unsigned mask) {
  seat_of_caller("__syncwarp", mask, kWarpSize);
  wait_at_collective(Collective::syncwarp);
}

uint32_t shuffle_bits(unsigned mask, uint32_t bits, int source_lane, int width) {
  const Seat s = seat_of_caller("__shfl_sync", mask, width);
  s.warp.shuffled[s.slot][s.lane] = bits;
  wait_at_collective(Collective::shuffle);
  return s.warp.shuffled[s.slot][((source_lane % kWarpSize) + kWarpSize) % kWarpSize];
}

uint32_t shuffle_xor_bits(unsigned mask, uint32_t bits, int lane_mask, int width) {
  const Seat s = seat_of_caller("__shfl_xor_sync", mask, width);
  if (lane_mask < 0 || lane_mask >= kWarpSize)
    fail_in_kernel("__shfl_xor_sync with lane mask " + std::to_string(lane_mask) + " (not emulated)");
  s.warp.shuffled[s.slot][s.lane] = bits;
  wait_at_collective(Collective::shuffle);
  return s.warp.shuffled[s.slot][s.lane ^ lane_mask];
}

uint32_t shuffle_up_bits(unsigned mask, uint32_t bits, int delta, int width) {
  const Seat s = seat_of_caller("__shfl_up_sync", mask, width);
  s.warp.shuffled[s.slot][s.lane] = bits;
  wait_at_collective(Collective::shuffle);
  const int source = s.lane - delta;
  return s.warp.shuffled[s.slot][source >= 0 && source < kWarpSize ? source : s.lane];
}

uint32_t shuffle_down_bits(unsigned mask, uint32_t bits, int delta, int width) {
  const Seat s = seat_of_caller("__shfl_down_sync", mask, width);
  s.warp.shuffled[s.slot][s.lane] = bits;
  wait_at_collective(Collective::shuffle);
  const int source = s.lane + delta;
  return s.warp.shuffled[s.slot][source >= 0 && source < kWarpSize ? source : s.lane];
}

uint32_t ballot(unsigned mask, bool predicate) {
  const Seat s = seat_of_caller("__ballot_sync", mask, kWarpSize);
  s.warp.shuffled[s.slot][s.lane] = predicate ? 1u : 0u;
  wait_at_collective(Collective::shuffle);
  uint32_t bits = 0;
  for (int lane = 0; lane < kWarpSize; ++lane) bits |= s.warp.shuffled[s.slot][lane] << lane;
  return bits;
}

void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  const Seat s = seat_of_caller("mma.m16n8k8", kFullMask, kWarpSize);
  MmaOperands& mine = s.warp.mma[s.slot][s.lane];
  std::copy(a, a + 4, mine.a);
  std::copy(b, b + 2, mine.b);
  std::copy(d, d + 4, mine.c);
  wait_at_collective(Collective::mma);
  mma_m16n8k8_tf32_lane(s.warp.mma[s.slot], s.lane, d);
}

void trap(const char* why) {
  launch_of_caller(why);
  fail_in_kernel(why);
}

cudaError_t set_max_dynamic_shared(uintptr_t kernel, int bytes) {
  if (bytes < 0 || static_cast<size_t>(bytes) > kMaxDynamicSharedBytes) return cudaErrorInvalidValue;
  g_shared_opt_in[kernel] = static_cast<size_t>(bytes);
  return cudaSuccess;
}

void* dynamic_shared() { return g_shared; }

void set_schedule(Schedule schedule) { g_schedule = schedule; }

const std::string& last_failure() { return g_last_failure; }

int max_active_blocks(uintptr_t kernel, int threads, size_t shared_bytes) {
  const auto opt_in = g_shared_opt_in.find(kernel);
  const size_t allowed =
      std::max(kDefaultDynamicSharedBytes, opt_in == g_shared_opt_in.end() ? size_t{0} : opt_in->second);
  if (threads < 1 || threads > kMaxThreadsPerBlock || shared_bytes > allowed) return 0;
  const size_t by_threads = static_cast<size_t>(kMaxThreadsPerSm / threads);
  const size_t by_shared = shared_bytes == 0 ? by_threads : kSharedBytesPerSm / shared_bytes;
  return static_cast<int>(std::min({by_threads, by_shared, size_t{32}}));
}

cudaError_t take_last_error() {
  const cudaError_t e = g_last_error;
  g_last_error = cudaSuccess;
  return e;
}

void run_grid(uintptr_t kernel, dim3 grid, dim3 block, size_t shared_bytes, const std::function<void()>& body) {
  const int64_t threads = int64_t{block.x} * block.y * block.z;
  const int64_t blocks = int64_t{grid.x} * grid.y * grid.z;
  g_last_failure.clear();
  auto refuse = [](cudaError_t error, std::string why) {
    g_last_error = error;
    g_last_failure = std::move(why);
  };
  if (g_launch != nullptr) return refuse(cudaErrorLaunchFailure, "a launch from device code (not emulated)");
  if (threads < 1 || threads > kMaxThreadsPerBlock || grid.x > INT_MAX || grid.y > 65535 || grid.z > 65535)
    return refuse(cudaErrorInvalidConfiguration,
                  "a grid of " + std::to_string(grid.x) + " x " + std::to_string(grid.y) + " x " +
                      std::to_string(grid.z) + " blocks of " + std::to_string(block.x) + " x " +
                      std::to_string(block.y) + " x " + std::to_string(block.z) + " threads");
  const auto opt_in = g_shared_opt_in.find(kernel);
  const size_t allowed =
      std::max(kDefaultDynamicSharedBytes, opt_in == g_shared_opt_in.end() ? size_t{0} : opt_in->second);
  if (shared_bytes > allowed)
    return refuse(cudaErrorInvalidValue, std::to_string(shared_bytes) + " bytes of dynamic shared memory, " +
                                             std::to_string(allowed) + " allowed for this kernel");

  Launch l(static_cast<int>(threads), body);
  g_launch = &l;
  blockDim = block;
  gridDim = grid;
  // Dynamic shared memory is NaN (bytes 0xff) before each block. A write
  // past the launch's share is looked for just past it after each block,
  // where an off-by-one lands, and anywhere past it once at the launch's
  // end: refilling and scanning all of it per block made grids of many
  // blocks slow.
  const auto written = [](size_t begin, size_t end) {
    const auto past = std::find_if(g_shared + begin, g_shared + end, [](unsigned char byte) { return byte != 0xff; });
    return past == g_shared + end ? size_t{0} : static_cast<size_t>(past - g_shared) + 1;
  };
  const auto wrote_past = [&](const std::string& who, size_t at_plus_one) {
    return who + " wrote shared memory at byte " + std::to_string(at_plus_one - 1) + ", past the launch's " +
           std::to_string(shared_bytes);
  };
  const size_t watched_end = std::min(g_shared_bytes, shared_bytes + kSharedWatchBytes);
  std::fill(g_shared, g_shared + g_shared_bytes, static_cast<unsigned char>(0xff));
  for (int64_t b = 0; b < blocks && l.failure.empty(); ++b) {
    const auto linear = static_cast<unsigned>(b);
    blockIdx = uint3{linear % grid.x, linear / grid.x % grid.y, linear / (grid.x * grid.y)};
    std::fill(g_shared, g_shared + shared_bytes, static_cast<unsigned char>(0xff));
    if (!run_block(l)) continue;
    if (const size_t at = written(shared_bytes, watched_end)) l.failure = wrote_past(block_name(), at);
  }
  if (l.failure.empty()) {
    if (const size_t at = written(watched_end, g_shared_bytes)) l.failure = wrote_past("a block", at);
  }
  g_launch = nullptr;
  l.stacks.release();
  madvise(g_shared, g_shared_bytes, MADV_DONTNEED);
  if (!l.failure.empty()) refuse(cudaErrorLaunchFailure, l.failure);
}

}  // namespace warp_emulation
