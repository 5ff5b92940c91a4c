// CUDA plumbing shared by the CUDA softmax_topk submissions of this
// repository (host code; include from a .cu or a .cpp compiled with the CUDA
// include path): CUDA errors as ABI statuses, and a cached device workspace so
// that no call allocates device memory once the largest shape has been seen.
#ifndef SOFTMAX_TOPK_CUDA_SUPPORT_H
#define SOFTMAX_TOPK_CUDA_SUPPORT_H

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "abi_support.h"

namespace softmax_topk_abi {

inline harness_status cuda_fail(const char* what, cudaError_t err) noexcept {
  try {
    last_error_message() = std::string(what) + ": " + cudaGetErrorName(err) + ": " +
                           cudaGetErrorString(err);
  } catch (...) {
  }
  return HARNESS_STATUS_ERROR;
}

// One grow-only device buffer per device. Growing frees the old buffer first:
// cudaFree waits for the device, so work still using it (queued by an earlier
// call) finishes before the memory goes. Calls on several streams at once
// would share the buffer: the submissions assume one stream at a time, as the
// harness calls them. Never freed: at process exit the CUDA runtime may
// already be gone, and the driver reclaims the memory anyway.
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

// Multiprocessor count of `device`, cached: the attribute query is cheap but
// not free, and a small case's kernels take only microseconds.
inline cudaError_t multiprocessor_count(int device, int* out) {
  static std::mutex mutex;
  static std::map<int, int> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(device);
  if (it != cache.end()) {
    *out = it->second;
    return cudaSuccess;
  }
  const cudaError_t err = cudaDeviceGetAttribute(out, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess) cache[device] = *out;
  return err;
}

// The workspace of this submission library (one per library: every
// submission is its own shared object).
inline DeviceWorkspace& device_workspace() {
  static DeviceWorkspace* workspace = new DeviceWorkspace();  // never destroyed, see above
  return *workspace;
}

}  // namespace softmax_topk_abi

#endif  // SOFTMAX_TOPK_CUDA_SUPPORT_H
