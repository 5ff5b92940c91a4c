// CUDA twins: device memory of the harness's own context, exported to the
// worker as legacy CUDA IPC handles (cudaIpcGetMemHandle). The harness copies
// with plain cudaMemcpy, which returns once the copy is complete, and writes
// a round's scattered words with a kernel of its own on its context's
// default stream; nothing it does waits on, or is ordered with, the
// worker's streams.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "harness/core/error.h"
#include "harness/device_memory/device_memory.h"

namespace harness {

namespace {

// twin[index[i]] = value[i], one 8-byte word each.
__global__ void scatter_words(unsigned long long* twin, const unsigned long long* index,
                              const unsigned long long* value, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    twin[index[i]] = value[i];
  }
}

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
  ~CudaTwin() override {
    cudaFree(scratch_);
    cudaFree(memory_);
  }
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

 protected:
  // The scattered words (a few a row) in one upload of their indices and
  // values and one kernel, not a copy each.
  void write_words(const std::vector<uint64_t>& offsets, const std::vector<uint64_t>& words) override {
    const size_t n = offsets.size();
    std::vector<unsigned long long> index(n);
    for (size_t i = 0; i < n; ++i) {
      check_twin_range("CUDA", "word write", what_, offsets[i], 8, bytes_);
      index[i] = offsets[i] / 8;
    }
    const size_t scratch_bytes = 2 * n * sizeof(unsigned long long);
    if (scratch_bytes > scratch_capacity_) {
      cudaFree(scratch_);
      scratch_ = nullptr;
      scratch_capacity_ = 0;
      check(cudaMalloc(&scratch_, scratch_bytes), "cudaMalloc of the scattered words", what_);
      scratch_capacity_ = scratch_bytes;
    }
    auto* device_index = static_cast<unsigned long long*>(scratch_);
    unsigned long long* device_value = device_index + n;
    check(cudaMemcpy(device_index, index.data(), n * sizeof(unsigned long long), cudaMemcpyHostToDevice),
          "cudaMemcpy of the scattered words' indices", what_);
    check(cudaMemcpy(device_value, words.data(), n * sizeof(unsigned long long), cudaMemcpyHostToDevice),
          "cudaMemcpy of the scattered words' values", what_);
    const unsigned blocks = static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 4096));
#ifdef WARP_EMULATION  // built for the host's warp emulator (tests/support/warp_emulation)
    warp_emulation::launch(scatter_words, dim3(blocks), dim3(256), 0, static_cast<unsigned long long*>(memory_), device_index,
                           device_value, n);
#else
    scatter_words<<<blocks, 256>>>(static_cast<unsigned long long*>(memory_), device_index, device_value, n);
#endif
    check(cudaGetLastError(), "launching the scatter of words", what_);
    check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize after the scatter of words", what_);
  }

 private:
  int device_;
  size_t bytes_;
  std::string what_;
  void* memory_ = nullptr;
  std::string handle_;
  void* scratch_ = nullptr;  // the scattered words' indices and values
  size_t scratch_capacity_ = 0;
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
