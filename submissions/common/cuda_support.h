// CUDA plumbing shared by the CUDA submissions of this repository, whatever
// their challenge (host code; include from a .cu): CUDA errors as ABI
// statuses, a cached device workspace so that no call allocates device memory
// once the largest shape has been seen, and cached device attributes.
#ifndef SUBMISSION_CUDA_SUPPORT_H
#define SUBMISSION_CUDA_SUPPORT_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "abi_errors.h"

namespace submission_abi {

inline harness_status cuda_fail(const char* what, cudaError_t err) noexcept {
  try {
    last_error_message() = std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  } catch (...) {
  }
  return HARNESS_STATUS_ERROR;
}

// Makes *buffer at least `bytes` (contents not kept), allocating only when
// it grows. cudaFree waits for work still using the old buffer.
inline cudaError_t grow_device_buffer(void** buffer, int64_t* capacity, int64_t bytes) {
  if (bytes <= *capacity) return cudaSuccess;
  if (*buffer != nullptr) {
    const cudaError_t err = cudaFree(*buffer);
    *buffer = nullptr;
    *capacity = 0;
    if (err != cudaSuccess) return err;
  }
  const cudaError_t err = cudaMalloc(buffer, static_cast<size_t>(bytes));
  if (err != cudaSuccess) {
    *buffer = nullptr;
    return err;
  }
  *capacity = bytes;
  return cudaSuccess;
}

// One grow-only device buffer per device. Growing frees the old buffer first:
// cudaFree waits for the device, so work still using it (queued by an earlier
// call) finishes before the memory goes. The submissions assume one stream
// at a time, as the harness calls them. Never freed: at process exit the
// CUDA runtime may already be gone, and the driver reclaims the memory.
class DeviceWorkspace {
 public:
  // *out: at least `bytes` on `device` (the current device); null for 0.
  cudaError_t get(int device, size_t bytes, void** out) {
    std::lock_guard<std::mutex> lock(mutex_);
    Buffer& buffer = buffers_[device];
    if (bytes > buffer.bytes) {
      if (buffer.data != nullptr) {
        const cudaError_t err = cudaFree(buffer.data);
        buffer.data = nullptr;
        buffer.bytes = 0;
        if (err != cudaSuccess) return err;
      }
      const size_t rounded = (bytes + (size_t{1} << 20) - 1) & ~((size_t{1} << 20) - 1);
      const cudaError_t err = cudaMalloc(&buffer.data, rounded);
      if (err != cudaSuccess) {
        buffer.data = nullptr;
        return err;
      }
      buffer.bytes = rounded;
    }
    *out = bytes == 0 ? nullptr : buffer.data;
    return cudaSuccess;
  }

 private:
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
  };
  std::mutex mutex_;
  std::map<int, Buffer> buffers_;
};

// The workspace of this submission library (each submission is its own .so).
inline DeviceWorkspace& device_workspace() {
  static DeviceWorkspace* workspace = new DeviceWorkspace();  // never destroyed, see above
  return *workspace;
}

// An integer attribute of `device`, cached: the query is cheap but not free,
// and a small case's kernels take only microseconds.
inline cudaError_t device_attribute(int device, cudaDeviceAttr attribute, int* out) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, static_cast<int>(attribute));
  const auto it = cache.find(key);
  if (it != cache.end()) {
    *out = it->second;
    return cudaSuccess;
  }
  const cudaError_t err = cudaDeviceGetAttribute(out, attribute, device);
  if (err == cudaSuccess) cache[key] = *out;
  return err;
}

// True when every pointer is 16-byte aligned (float4 access).
inline bool aligned16(std::initializer_list<const void*> pointers) {
  for (const void* p : pointers)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  return true;
}

}  // namespace submission_abi

#endif  // SUBMISSION_CUDA_SUPPORT_H
