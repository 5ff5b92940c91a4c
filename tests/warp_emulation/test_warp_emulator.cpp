// The warp emulator itself: shuffles, votes, barrier counts and atomics
// give the hardware's answers; __syncthreads orders a block's threads (and its absence
// shows); lanes that part ways at a warp collective, a trap, a read of
// shared memory no thread wrote (each block's is NaN), a write past the
// launch's shared memory and an exception each end the launch with a
// message that says where; and the runtime's
// rule on dynamic shared memory past 48 KiB holds.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

float* shared_floats() { return static_cast<float*>(warp_emulation::dynamic_shared()); }

struct Args {
  float* out;
  int n;
};

// Each launch's error, and the emulator's account of it.
struct Outcome {
  cudaError_t error;
  std::string failure;
};

template <class Kernel>
Outcome run(Kernel kernel, unsigned blocks, unsigned threads, size_t shared, const Args& args) {
  warp_emulation::launch(kernel, dim3(blocks), dim3(threads), shared, args);
  const cudaError_t error = cudaGetLastError();
  return Outcome{error, warp_emulation::last_failure()};
}

__global__ void reverse_and_butterfly(const Args a) {
  const int lane = threadIdx.x % 32;
  const float reversed = __shfl_sync(0xffffffffu, static_cast<float>(lane), 31 - lane);
  float sum = static_cast<float>(lane);
  for (int m = 16; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
  a.out[2 * threadIdx.x] = reversed;
  a.out[2 * threadIdx.x + 1] = sum;
}

TEST(WarpEmulator, ShufflesReadTheNamedLaneAndAButterflySumsTheWarp) {
  std::vector<float> out(2 * 64);
  const Outcome o = run(reverse_and_butterfly, 1, 64, 0, Args{out.data(), 64});
  ASSERT_EQ(o.error, cudaSuccess) << o.failure;
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(out[2 * t], 31 - t % 32) << "thread " << t;
    EXPECT_EQ(out[2 * t + 1], 31 * 32 / 2) << "thread " << t;
  }
}

// Per thread: its lane's prefix sum by __shfl_up_sync, the lane above's
// value by __shfl_down_sync, the warp's ballot of odd lanes, __any_sync and
// __all_sync of lane < 3, the block's count of threads below 40 and its
// atomic counter of arrivals.
__global__ void votes_and_scans(const Args a) {
  __shared__ int arrivals;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) arrivals = 0;
  __syncthreads();
  int inclusive = 1;
  for (int d = 1; d < 32; d *= 2) {
    const int below = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += below;
  }
  float* out = a.out + 8 * threadIdx.x;
  out[0] = static_cast<float>(inclusive);
  out[1] = __shfl_down_sync(0xffffffffu, static_cast<float>(lane), 1);
  out[2] = static_cast<float>(__ballot_sync(0xffffffffu, lane % 2) == 0xaaaaaaaau);
  out[3] = static_cast<float>(__any_sync(0xffffffffu, lane < 3));
  out[4] = static_cast<float>(__all_sync(0xffffffffu, lane < 3));
  out[5] = static_cast<float>(__syncthreads_count(threadIdx.x < 40));
  atomicAdd(&arrivals, 1);
  out[6] = static_cast<float>(__syncthreads_or(0));
  out[7] = static_cast<float>(arrivals);
}

TEST(WarpEmulator, VotesScansBarrierCountsAndAtomicsGiveTheHardwaresAnswers) {
  constexpr int kThreads = 64;
  std::vector<float> out(8 * kThreads);
  const Outcome o = run(votes_and_scans, 2, kThreads, 0, Args{out.data(), kThreads});
  ASSERT_EQ(o.error, cudaSuccess) << o.failure;
  for (int t = 0; t < kThreads; ++t) {
    const float* x = out.data() + 8 * t;
    const int lane = t % 32;
    EXPECT_EQ(x[0], lane + 1) << t;
    EXPECT_EQ(x[1], lane == 31 ? 31 : lane + 1) << t;
    EXPECT_EQ(x[2], 1) << t;
    EXPECT_EQ(x[3], 1) << t;
    EXPECT_EQ(x[4], 0) << t;
    EXPECT_EQ(x[5], 40) << t;
    EXPECT_EQ(x[6], 0) << t;
    EXPECT_EQ(x[7], kThreads) << t;
  }
}

// Thread t writes slot t of shared memory and reads its neighbour's.
template <bool kBarrier>
__global__ void read_neighbour(const Args a) {
  float* s = shared_floats();
  s[threadIdx.x] = static_cast<float>(threadIdx.x);
  if (kBarrier) __syncthreads();
  a.out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

TEST(WarpEmulator, TheBarrierOrdersTheBlockAndWithoutItAReadSeesSharedMemoryNoThreadWrote) {
  std::vector<float> out(128);
  Outcome o = run(read_neighbour<true>, 1, 128, 128 * sizeof(float), Args{out.data(), 128});
  ASSERT_EQ(o.error, cudaSuccess) << o.failure;
  for (int t = 0; t < 128; ++t) EXPECT_EQ(out[t], (t + 1) % 128);

  o = run(read_neighbour<false>, 1, 128, 128 * sizeof(float), Args{out.data(), 128});
  ASSERT_EQ(o.error, cudaSuccess) << o.failure;
  EXPECT_TRUE(std::isnan(out[0])) << "thread 0 ran on before thread 1 wrote: it reads the poison, " << out[0];
}

// Two steps over one tile of shared memory: each thread writes its slot,
// and after the barrier reads the slot of the same lane in the next warp;
// a shuffle, then the next step's write, with a barrier before it or not.
template <bool kBarrierBeforeRewrite>
__global__ void two_steps_over_a_tile(const Args a) {
  const unsigned n = blockDim.x;
  float seen = 0;
  for (int step = 0; step < 2; ++step) {
    if (kBarrierBeforeRewrite) __syncthreads();
    shared_floats()[threadIdx.x] = static_cast<float>(100 * step + threadIdx.x);
    __syncthreads();
    seen += shared_floats()[(threadIdx.x + 32) % n];
    seen = __shfl_xor_sync(0xffffffffu, seen, 0);
  }
  a.out[threadIdx.x] = seen;
}

TEST(WarpEmulator, RunWarpByWarpAWarpReadsWhatAnotherRewroteWithNoBarrierBetween) {
  constexpr int kThreads = 128;
  std::vector<float> out(kThreads);
  auto expected = [&](int t) { return static_cast<float>(100 + 2 * ((t + 32) % kThreads)); };
  auto all_right = [&] {
    for (int t = 0; t < kThreads; ++t)
      if (out[t] != expected(t)) return false;
    return true;
  };
  for (const auto schedule : {warp_emulation::Schedule::lockstep, warp_emulation::Schedule::warp_by_warp_ascending,
                              warp_emulation::Schedule::warp_by_warp_descending}) {
    warp_emulation::set_schedule(schedule);
    Outcome o = run(two_steps_over_a_tile<true>, 1, kThreads, kThreads * sizeof(float), Args{out.data(), kThreads});
    ASSERT_EQ(o.error, cudaSuccess) << o.failure;
    EXPECT_TRUE(all_right()) << "with the barrier, schedule " << static_cast<int>(schedule);
    o = run(two_steps_over_a_tile<false>, 1, kThreads, kThreads * sizeof(float), Args{out.data(), kThreads});
    ASSERT_EQ(o.error, cudaSuccess) << o.failure;
    // In lockstep every warp reads before any rewrites: the race hides.
    EXPECT_EQ(all_right(), schedule == warp_emulation::Schedule::lockstep)
        << "without the barrier, schedule " << static_cast<int>(schedule);
  }
  warp_emulation::set_schedule(warp_emulation::Schedule::lockstep);
}

// Lane 0 of each warp writes its warp's slot; every lane reads it, with a
// __syncwarp between or not.
template <bool kSyncWarp>
__global__ void lane_zero_publishes(const Args a) {
  const unsigned warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) shared_floats()[warp] = static_cast<float>(warp + 1);
  if (kSyncWarp) __syncwarp();
  a.out[threadIdx.x] = shared_floats()[warp];
}

TEST(WarpEmulator, DescendingLanesReadBeforeLaneZeroWritesWithNoSyncwarpBetween) {
  constexpr int kThreads = 64;
  std::vector<float> out(kThreads);
  auto all_right = [&] {
    for (int t = 0; t < kThreads; ++t)
      if (out[t] != static_cast<float>(t / 32 + 1)) return false;
    return true;
  };
  for (const auto schedule : {warp_emulation::Schedule::lockstep, warp_emulation::Schedule::warp_by_warp_ascending,
                              warp_emulation::Schedule::warp_by_warp_descending}) {
    warp_emulation::set_schedule(schedule);
    Outcome o = run(lane_zero_publishes<true>, 1, kThreads, 64, Args{out.data(), kThreads});
    ASSERT_EQ(o.error, cudaSuccess) << o.failure;
    EXPECT_TRUE(all_right()) << "with __syncwarp, schedule " << static_cast<int>(schedule);
    o = run(lane_zero_publishes<false>, 1, kThreads, 64, Args{out.data(), kThreads});
    ASSERT_EQ(o.error, cudaSuccess) << o.failure;
    EXPECT_EQ(all_right(), schedule != warp_emulation::Schedule::warp_by_warp_descending)
        << "without __syncwarp, schedule " << static_cast<int>(schedule);
  }
  warp_emulation::set_schedule(warp_emulation::Schedule::lockstep);
}

__global__ void half_warp_shuffles(const Args a) {
  float x = static_cast<float>(threadIdx.x);
  if (threadIdx.x % 32 < 16) x = __shfl_xor_sync(0xffffffffu, x, 1);
  a.out[threadIdx.x] = x;
}

TEST(WarpEmulator, LanesThatPartWaysAtAFullWarpShuffleEndTheLaunchNamingThem) {
  std::vector<float> out(64);
  const Outcome o = run(half_warp_shuffles, 3, 64, 0, Args{out.data(), 64});
  EXPECT_EQ(o.error, cudaErrorLaunchFailure);
  EXPECT_EQ(o.failure,
            "the lanes of warp 0 of block 0 are not at the same collective: lanes 0-15 wait at a shuffle (their "
            "collective #1), 16-31 have exited");
}

__global__ void trap_in_one_thread(const Args a) {
  if (blockIdx.x == 1 && threadIdx.x == 37) __trap();
  a.out[threadIdx.x] = 1;
}

TEST(WarpEmulator, ATrapEndsTheLaunchAtItsBlockAndThread) {
  std::vector<float> out(64);
  const Outcome o = run(trap_in_one_thread, 4, 64, 0, Args{out.data(), 64});
  EXPECT_EQ(o.error, cudaErrorLaunchFailure);
  EXPECT_EQ(o.failure, "__trap() in block 1, thread 37 (warp 1, lane 5)");
}

__global__ void write_one_past(const Args a) { shared_floats()[a.n] = 1.0f; }

TEST(WarpEmulator, AWritePastTheLaunchsSharedMemoryEndsTheLaunch) {
  const Outcome inside = run(write_one_past, 2, 32, 1024, Args{nullptr, 255});
  EXPECT_EQ(inside.error, cudaSuccess) << inside.failure;
  const Outcome past = run(write_one_past, 2, 32, 1024, Args{nullptr, 256});
  EXPECT_EQ(past.error, cudaErrorLaunchFailure);
  EXPECT_EQ(past.failure, "block 0 wrote shared memory at byte 1024, past the launch's 1024");
  // Far past it: looked for once the launch is done, not after each block.
  const Outcome far = run(write_one_past, 2, 32, 1024, Args{nullptr, 256 + 4096});
  EXPECT_EQ(far.error, cudaErrorLaunchFailure);
  EXPECT_EQ(far.failure, "a block wrote shared memory at byte 17408, past the launch's 1024");
}

// Each block reads its first shared word before it writes it.
__global__ void read_then_write_shared(const Args a) {
  if (threadIdx.x == 0) {
    a.out[blockIdx.x] = shared_floats()[0];
    shared_floats()[0] = 1.0f;
  }
}

TEST(WarpEmulator, EveryBlockFindsItsSharedMemoryNaNNotWhatTheLastBlockLeft) {
  std::vector<float> out(3, 0.0f);
  const Outcome o = run(read_then_write_shared, 3, 32, 64, Args{out.data(), 3});
  ASSERT_EQ(o.error, cudaSuccess) << o.failure;
  for (int b = 0; b < 3; ++b) EXPECT_TRUE(std::isnan(out[b])) << "block " << b << " read " << out[b];
}

// An exception unwinds the thread's own stack, and ends the launch.
__global__ void throw_in_one_thread(const Args a) {
  if (blockIdx.x == 1 && threadIdx.x == 5) throw std::runtime_error("a bad index");
  a.out[threadIdx.x] = 1;
}

TEST(WarpEmulator, AnExceptionInDeviceCodeEndsTheLaunchAtItsThread) {
  std::vector<float> out(32);
  const Outcome o = run(throw_in_one_thread, 2, 32, 0, Args{out.data(), 32});
  EXPECT_EQ(o.error, cudaErrorLaunchFailure);
  EXPECT_EQ(o.failure, "an exception (a bad index) in block 1, thread 5 (warp 0, lane 5)");
  const Outcome again = run(reverse_and_butterfly, 1, 32, 0, Args{std::vector<float>(64).data(), 32});
  EXPECT_EQ(again.error, cudaSuccess) << "the launch after it: " << again.failure;
}

__global__ void nothing(const Args) {}

TEST(WarpEmulator, PastFortyEightKibOfSharedMemoryAKernelMustOptIn) {
  constexpr size_t kBytes = 64 * 1024;
  Outcome o = run(nothing, 1, 32, kBytes, Args{nullptr, 0});
  EXPECT_EQ(o.error, cudaErrorInvalidValue);
  EXPECT_EQ(o.failure, "65536 bytes of dynamic shared memory, 49152 allowed for this kernel");
  ASSERT_EQ(cudaFuncSetAttribute(nothing, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kBytes)),
            cudaSuccess);
  o = run(nothing, 1, 32, kBytes, Args{nullptr, 0});
  EXPECT_EQ(o.error, cudaSuccess) << o.failure;
  EXPECT_EQ(cudaFuncSetAttribute(nothing, cudaFuncAttributeMaxDynamicSharedMemorySize, 228 * 1024),
            cudaErrorInvalidValue);
}

}  // namespace
