// What CUDA device code names, for device code compiled by the host's
// compiler and run by the warp emulator (block_scheduler.h): the function
// qualifiers, the vector types, the thread indices, the math intrinsics,
// and the block and warp collectives, each a real synchronisation of the
// emulated threads. Reached through the stand-in <cuda_runtime.h>
// (stand_in/), which the emulated test binaries find first on their path.
//
// Device code tells an emulated build apart by WARP_EMULATION, where it
// must (an inline-assembly instruction, a launch).
#ifndef WARP_EMULATION_DEVICE_BUILTINS_H
#define WARP_EMULATION_DEVICE_BUILTINS_H

#define WARP_EMULATION 1

#include <math.h>

#include <cstdint>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// A block's static shared variable is one variable for every thread, as a
// function's static local is; blocks run one after another, so it holds
// what the previous block left, as on a GPU. (Dynamic shared memory is
// dynamic_shared(), poisoned before each block.)
#define __shared__ static
#define __launch_bounds__(...)

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  unsigned x, y, z;
};

struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(16) double2 {
  double x, y;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline double2 make_double2(double x, double y) { return double2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }

// Set by the scheduler before it resumes each emulated thread.
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

inline uint32_t __float_as_uint(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
inline float __uint_as_float(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
inline int __float_as_int(float x) { return static_cast<int>(__float_as_uint(x)); }
inline float __int_as_float(int bits) { return __uint_as_float(static_cast<uint32_t>(bits)); }

// The device's fast exponential is within a few ulp of expf; the
// emulator takes expf.
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a < b ? b : a; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a < b ? b : a; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a < b ? b : a; }

namespace warp_emulation {

// The block's dynamic shared memory (what `extern __shared__` names on a
// GPU; device code asks for it here under WARP_EMULATION).
void* dynamic_shared();

// Each a point where the calling emulated thread waits for the others it
// names (the scheduler reports a collective some of them never reach).
void sync_block();
void sync_warp(unsigned mask);
uint32_t shuffle_bits(unsigned mask, uint32_t bits, int source_lane, int width);
uint32_t shuffle_xor_bits(unsigned mask, uint32_t bits, int lane_mask, int width);
// Lane - delta (up) or lane + delta (down); a lane whose source is outside
// the warp keeps its own value.
uint32_t shuffle_up_bits(unsigned mask, uint32_t bits, int delta, int width);
uint32_t shuffle_down_bits(unsigned mask, uint32_t bits, int delta, int width);
// Bit l set where lane l's predicate is true.
uint32_t ballot(unsigned mask, bool predicate);
// __syncthreads, counting the threads (that have not exited) whose
// predicate is true.
int sync_block_count(bool predicate);
// d += a * b, mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, for the
// calling lane's registers (the PTX ISA's fragment layouts, mma_tf32.cpp).
void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
// Ends the launch with `why` as its failure.
[[noreturn]] void trap(const char* why);

// `value` moved between lanes one 32-bit word at a time, a collective
// each (as the hardware moves a 64-bit value: two shuffles).
template <class T, class Move>
T shuffled(T value, Move move) {
  static_assert(sizeof(T) % sizeof(uint32_t) == 0, "the emulator shuffles whole 32-bit words");
  uint32_t words[sizeof(T) / sizeof(uint32_t)];
  std::memcpy(words, &value, sizeof value);
  for (uint32_t& w : words) w = move(w);
  std::memcpy(&value, words, sizeof value);
  return value;
}

}  // namespace warp_emulation

inline void __syncthreads() { warp_emulation::sync_block(); }
inline int __syncthreads_count(int predicate) { return warp_emulation::sync_block_count(predicate != 0); }
inline int __syncthreads_or(int predicate) { return __syncthreads_count(predicate) != 0; }
inline unsigned __ballot_sync(unsigned mask, int predicate) { return warp_emulation::ballot(mask, predicate != 0); }
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) == mask; }
inline void __syncwarp(unsigned mask = 0xffffffffu) { warp_emulation::sync_warp(mask); }
[[noreturn]] inline void __trap() { warp_emulation::trap("__trap()"); }

template <class T>
T __shfl_sync(unsigned mask, T value, int source_lane, int width = 32) {
  return warp_emulation::shuffled(
      value, [&](uint32_t w) { return warp_emulation::shuffle_bits(mask, w, source_lane, width); });
}

template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
  return warp_emulation::shuffled(
      value, [&](uint32_t w) { return warp_emulation::shuffle_xor_bits(mask, w, lane_mask, width); });
}

template <class T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  return warp_emulation::shuffled(
      value, [&](uint32_t w) { return warp_emulation::shuffle_up_bits(mask, w, static_cast<int>(delta), width); });
}

template <class T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  return warp_emulation::shuffled(
      value, [&](uint32_t w) { return warp_emulation::shuffle_down_bits(mask, w, static_cast<int>(delta), width); });
}

// Only one emulated thread runs at a time: every read-modify-write is atomic.
template <class T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}

template <class T>
T atomicMax(T* address, T value) {
  const T old = *address;
  if (old < value) *address = value;
  return old;
}

// Loads and stores with cache hints: plain ones here.
template <class T>
T __ldg(const T* address) {
  return *address;
}
template <class T>
T __ldcs(const T* address) {
  return *address;
}
template <class T>
T __ldcg(const T* address) {
  return *address;
}
template <class T>
void __stcs(T* address, T value) {
  *address = value;
}
template <class T>
void __stcg(T* address, T value) {
  *address = value;
}

#endif  // WARP_EMULATION_DEVICE_BUILTINS_H
