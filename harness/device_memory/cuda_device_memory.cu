// CUDA twins: device memory of the harness's own context, exported to the
// worker as legacy CUDA IPC handles (cudaIpcGetMemHandle). The harness copies
// with plain cudaMemcpy, which returns once the copy is complete; nothing it
// does waits on, or is ordered with, the worker's streams.
#include <cuda_runtime.h>

#include "harness/core/error.h"
#include "harness/device_memory/device_memory.h"

namespace harness {

namespace {

void check(cudaError_t error, const char* call, const std::string& what) {
  if (error == cudaSuccess) return;
  throw HarnessError(fmt::format("{} for the device twin of {} failed: {} ({})", call, what, cudaGetErrorString(error),
                                 cudaGetErrorName(error)));
}

std::string hex_of(const cudaIpcMemHandle_t& handle) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&handle);
  for (size_t i = 0; i < sizeof(handle); ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 15];
  }
  return hex;
}

class CudaTwin : public DeviceTwin {
 public:
  CudaTwin(int device, size_t bytes, const std::string& what) : device_(device), bytes_(bytes), what_(what) {
    check(cudaSetDevice(device_), "cudaSetDevice", what_);
    check(cudaMalloc(&memory_, bytes_), "cudaMalloc", what_);
    cudaIpcMemHandle_t handle{};
    const cudaError_t exported = cudaIpcGetMemHandle(&handle, memory_);
    if (exported != cudaSuccess) cudaFree(memory_);
    check(exported, "cudaIpcGetMemHandle", what_);
    handle_ = hex_of(handle);
  }
  ~CudaTwin() override { cudaFree(memory_); }
  CudaTwin(const CudaTwin&) = delete;
  CudaTwin& operator=(const CudaTwin&) = delete;

  size_t bytes() const override { return bytes_; }
  DeviceHandle handle() const override {
    return {{{"kind", "cuda-ipc"}, {"handle", handle_}, {"device", device_}}, -1};
  }
  uint64_t inode() const override { return 0; }
  void upload(const void* host, size_t offset, size_t bytes) override {
    check_twin_range("CUDA", "upload", what_, offset, bytes, bytes_);
    check(cudaMemcpy(static_cast<unsigned char*>(memory_) + offset, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy",
          what_);
  }
  void download(void* host, size_t offset, size_t bytes) override {
    check_twin_range("CUDA", "download", what_, offset, bytes, bytes_);
    check(cudaMemcpy(host, static_cast<const unsigned char*>(memory_) + offset, bytes, cudaMemcpyDeviceToHost),
          "cudaMemcpy", what_);
  }

 private:
  int device_;
  size_t bytes_;
  std::string what_;
  void* memory_ = nullptr;
  std::string handle_;
};

class CudaDeviceMemory : public DeviceMemory {
 public:
  explicit CudaDeviceMemory(int device) : device_(device) {
    check(cudaSetDevice(device_), "cudaSetDevice", "any buffer");
    check(cudaFree(nullptr), "creating the harness's CUDA context", "any buffer");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties", "any buffer");
    name_ = prop.name;
  }
  std::string describe() const override {
    return fmt::format("cuda:{} ({}), memory of the harness's own context", device_, name_);
  }
  std::unique_ptr<DeviceTwin> allocate(size_t bytes, const std::string& what) override {
    return std::make_unique<CudaTwin>(device_, bytes, what);
  }

 private:
  int device_;
  std::string name_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_cuda_device_memory(int device_index) {
  return std::make_unique<CudaDeviceMemory>(device_index);
}

}  // namespace harness
