// The stand-in <cuda_runtime.h> of device code built for the warp emulator:
// the few runtime names kernel launchers use, with the runtime's rules for
// them (a launch past 48 KiB of dynamic shared memory needs the kernel's
// opt-in; an error waits in cudaGetLastError), and the device builtins.
// Only the emulated test binaries have this folder on their include path,
// ahead of any CUDA toolkit's.
#ifndef WARP_EMULATION_STAND_IN_CUDA_RUNTIME_H
#define WARP_EMULATION_STAND_IN_CUDA_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "warp_emulation/device_builtins.h"

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidDevice = 101,
  cudaErrorLaunchFailure = 719,
};

struct CUstream_st;
using cudaStream_t = CUstream_st*;

enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr {
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

namespace warp_emulation {

// The emulated device: Hopper's limits.
inline constexpr size_t kDefaultDynamicSharedBytes = 48 * 1024;
inline constexpr size_t kMaxDynamicSharedBytes = 227 * 1024;
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kMaxThreadsPerSm = 2048;
inline constexpr size_t kSharedBytesPerSm = 228 * 1024;

// The emulated device's memory is the host's: "device" allocations are
// host allocations (256-byte aligned, as cudaMalloc's), at most
// kDeviceMemoryBytes of them at once.
inline constexpr size_t kDeviceMemoryBytes = size_t{4} << 30;
cudaError_t device_malloc(void** p, size_t bytes);
cudaError_t device_free(void* p);
size_t device_bytes_in_use();
// Multiprocessors the emulated device reports (cudaDevAttrMultiProcessorCount);
// few, so that work planned per multiprocessor splits on small inputs.
int multiprocessors();
void set_multiprocessors(int count);

cudaError_t set_max_dynamic_shared(uintptr_t kernel, int bytes);
// Runs `body` (the kernel with its arguments) on every thread of `blocks`
// blocks of `threads`, block by block, each block's threads interleaved at
// their collectives. A failure (a collective not every thread reaches, a
// trap, a write past the launch's dynamic shared memory) ends the launch: its
// message is last_failure(), its error cudaGetLastError()'s.
void run_grid(uintptr_t kernel, dim3 grid, dim3 block, size_t shared_bytes, const std::function<void()>& body);
// Blocks of `threads` and `shared_bytes` resident on one multiprocessor, by
// threads and shared memory alone (registers are not emulated).
int max_active_blocks(uintptr_t kernel, int threads, size_t shared_bytes);
// The order in which a block's threads run between their waits. Lockstep:
// every warp one collective a round, in order of warps. Warp by warp: each
// warp on alone until it waits at the block barrier (or exits), in
// ascending or descending order (descending: lanes too, last first), so
// that shared memory one warp reads after another rewrote it for the next
// step with no barrier between, or a lane reads before another lane's
// write with no __syncwarp between, reads the wrong values.
enum class Schedule { lockstep, warp_by_warp_ascending, warp_by_warp_descending };
void set_schedule(Schedule schedule);
// The last launch's failure, "" if it had none.
const std::string& last_failure();
cudaError_t take_last_error();

// kernel<<<grid, block, shared_bytes>>>(args...), on the host.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, Args&&... args) {
  const std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  run_grid(reinterpret_cast<uintptr_t>(kernel), grid, block, shared_bytes, [&] { std::apply(kernel, params); });
}

// kernel<<<grid, block, shared, stream>>>(args...) as the host's compiler
// reads it: launcher(kernel, grid, block, shared, stream)(args...), as
// cuda_to_host.py writes the launches of a CUDA source.
template <class... Params>
struct Launcher {
  void (*kernel)(Params...);
  dim3 grid, block;
  size_t shared_bytes;
  template <class... Args>
  void operator()(Args&&... args) const {
    launch(kernel, grid, block, shared_bytes, std::forward<Args>(args)...);
  }
};

template <class... Params>
Launcher<Params...> launcher(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes = 0,
                             cudaStream_t = nullptr) {
  return Launcher<Params...>{kernel, grid, block, shared_bytes};
}

}  // namespace warp_emulation

template <class... Params>
cudaError_t cudaFuncSetAttribute(void (*kernel)(Params...), cudaFuncAttribute attribute, int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaErrorInvalidValue;
  return warp_emulation::set_max_dynamic_shared(reinterpret_cast<uintptr_t>(kernel), value);
}

template <class... Params>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, void (*kernel)(Params...), int threads,
                                                          size_t shared_bytes) {
  *blocks = warp_emulation::max_active_blocks(reinterpret_cast<uintptr_t>(kernel), threads, shared_bytes);
  return cudaSuccess;
}

inline cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }

struct cudaDeviceProp {
  char name[256];
};

inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  std::strncpy(prop->name, "warp emulator", sizeof prop->name);
  return cudaSuccess;
}

// A handle names the allocation (its address): the emulated device has one
// process, and a handle is only ever opened by another.
struct cudaIpcMemHandle_t {
  char reserved[64];
};

inline cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* p) {
  *handle = cudaIpcMemHandle_t{};
  std::memcpy(handle->reserved, &p, sizeof p);
  return cudaSuccess;
}

inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  switch (attribute) {
    case cudaDevAttrMultiProcessorCount: *value = warp_emulation::multiprocessors(); return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(warp_emulation::kMaxDynamicSharedBytes);
      return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *total_bytes = warp_emulation::kDeviceMemoryBytes;
  *free_bytes = warp_emulation::kDeviceMemoryBytes - warp_emulation::device_bytes_in_use();
  return cudaSuccess;
}

inline cudaError_t cudaMalloc(void** p, size_t bytes) { return warp_emulation::device_malloc(p, bytes); }
// The runtime's typed overload: cudaMalloc(&float_pointer, bytes).
template <class T>
cudaError_t cudaMalloc(T** p, size_t bytes) {
  void* memory = nullptr;
  const cudaError_t error = warp_emulation::device_malloc(&memory, bytes);
  *p = static_cast<T*>(memory);
  return error;
}
inline cudaError_t cudaFree(void* p) { return warp_emulation::device_free(p); }

// Launches run to their end before they return: every copy is in order.
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  std::memmove(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(to, from, bytes, kind);
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  std::memset(p, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) {
  return cudaMemset(p, value, bytes);
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

inline cudaError_t cudaGetLastError() { return warp_emulation::take_last_error(); }

inline const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
  }
  return "unknown error";
}

inline const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
  }
  return "cudaErrorUnknown";
}

#endif  // WARP_EMULATION_STAND_IN_CUDA_RUNTIME_H
