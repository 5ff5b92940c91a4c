// The worker's CUDA backend: a device mirror of every shared buffer (guard
// bands included), uploads before and downloads after each request, or a
// twin the harness owns and copies itself (opened by CUDA IPC), CUDA
// events on the legacy default stream (which orders every blocking stream;
// work on a non-blocking one escapes them, and CaseContext::time's host-clock
// cross-check catches it), started behind queued work (CudaTimer).
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "harness/core/dtype.h"
#include "harness/worker/cuda_errors.h"
#include "harness/worker/device_backend.h"

namespace harness {

namespace {

// After an error the allow-list calls harmless, the context must still
// answer: cleared, then a device-wide synchronisation that succeeds.
// Otherwise the error is treated as sticky after all.
std::string context_probe_failure() {
  (void)cudaGetLastError();
  cudaError_t probe = cudaDeviceSynchronize();
  if (probe == cudaSuccess) probe = cudaGetLastError();
  if (probe == cudaSuccess) return "";
  return fmt::format("; the context then failed a synchronisation: {} ({})", cudaGetErrorString(probe),
                     cudaGetErrorName(probe));
}

void check_cuda(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return;
  std::string message =
      fmt::format("{} failed: {} ({}) at {}:{}", call, cudaGetErrorString(error), cudaGetErrorName(error), file, line);
  bool sticky = !cuda_error_leaves_context_usable(error);
  if (!sticky) {
    const std::string probe = context_probe_failure();
    sticky = !probe.empty();
    message += probe;
  }
  throw DeviceFault(message, sticky);
}

#define WORKER_CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)

template <typename Word>
__global__ void fill_words(Word* data, size_t count, Word value) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    data[i] = value;
  }
}

template <typename Word>
void launch_fill(void* data, size_t count, uint64_t bits) {
  if (count == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((count + 255) / 256, 4096));
  fill_words<Word><<<blocks, 256>>>(static_cast<Word*>(data), count, static_cast<Word>(bits));
  WORKER_CUDA_CHECK(cudaGetLastError());
}

// Keeps the device busy for `nanoseconds` of its global timer.
__global__ void hold_device(unsigned long long nanoseconds) {
  unsigned long long begin = 0;
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(begin));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - begin < nanoseconds);
}

// Events around one call. On an idle device the start event would fire
// before the host had run the submission's host code and the launch, and
// time them as the kernel's. So start() first queues a short kernel that
// holds the device, then records the start behind it, by which time the
// call's first kernel is queued. The host clock still spans the hold.
class CudaTimer : public CallTimer {
 public:
  // Longer than the host side of a launch, short beside the perf cases.
  static constexpr unsigned long long kHoldNs = 20000;

  CudaTimer() {
    WORKER_CUDA_CHECK(cudaEventCreate(&start_));
    WORKER_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~CudaTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override {
    hold_device<<<1, 1>>>(kHoldNs);
    WORKER_CUDA_CHECK(cudaGetLastError());
    WORKER_CUDA_CHECK(cudaEventRecord(start_, 0));
  }
  void stop() override { WORKER_CUDA_CHECK(cudaEventRecord(stop_, 0)); }
  double elapsed_ns() override {
    float ms = 0;
    WORKER_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e6;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

class CudaBackend : public DeviceBackend {
 public:
  explicit CudaBackend(int device_index) : device_index_(device_index) {
    WORKER_CUDA_CHECK(cudaSetDevice(device_index));
    WORKER_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside a timed call
    cudaDeviceProp prop{};
    WORKER_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_index));
    name_ = prop.name;
  }

  std::string describe() const override { return fmt::format("cuda:{} ({})", device_index_, name_); }
  void* stream() override { return nullptr; }

  void attach(MappedBuffer& buffer) override {
    WORKER_CUDA_CHECK(cudaMalloc(&buffer.device, buffer.host->total_bytes()));
  }
  // A twin in the harness's own context, exported by CUDA IPC.
  void open(MappedBuffer& buffer, const nlohmann::json& memory) override {
    const std::string kind = memory.value("kind", "");
    if (kind != "cuda-ipc")
      throw HarnessError(fmt::format("a CUDA worker cannot open device memory of kind '{}'", kind));
    const std::string hex = memory.value("handle", "");
    cudaIpcMemHandle_t handle{};
    if (hex.size() != 2 * sizeof(handle)) {
      throw HarnessError(
          fmt::format("a CUDA IPC handle of {} hex digits (expected {})", hex.size(), 2 * sizeof(handle)));
    }
    auto* bytes = reinterpret_cast<unsigned char*>(&handle);
    for (size_t i = 0; i < sizeof(handle); ++i)
      bytes[i] = static_cast<unsigned char>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    WORKER_CUDA_CHECK(cudaIpcOpenMemHandle(&buffer.device, handle, cudaIpcMemLazyEnablePeerAccess));
  }
  void detach(MappedBuffer& buffer) override {
    if (buffer.device && buffer.harness_owned) {
      cudaIpcCloseMemHandle(buffer.device);
    } else if (buffer.device) {
      cudaFree(buffer.device);
    }
    buffer.device = nullptr;
  }
  void* data_pointer(MappedBuffer& buffer) override {
    return static_cast<unsigned char*>(buffer.device) + buffer.offset + SharedBuffer::data_offset();
  }
  void upload(MappedBuffer& buffer) override {
    HARNESS_CHECK(!buffer.harness_owned, "the harness copies the buffers it owns itself");
    WORKER_CUDA_CHECK(
        cudaMemcpy(buffer.device, buffer.host->base(), buffer.host->total_bytes(), cudaMemcpyHostToDevice));
  }
  void download(MappedBuffer& buffer) override {
    HARNESS_CHECK(!buffer.harness_owned, "the harness copies the buffers it owns itself");
    WORKER_CUDA_CHECK(
        cudaMemcpy(buffer.host->base(), buffer.device, buffer.host->total_bytes(), cudaMemcpyDeviceToHost));
  }
  void poison(MappedBuffer& buffer, const protocol::TensorBinding& binding) override {
    void* data = data_pointer(buffer);
    const uint64_t bits = poison_bits(binding.dtype);
    switch (dtype_size(binding.dtype)) {
      case 1: launch_fill<uint8_t>(data, binding.elements, bits); break;
      case 2: launch_fill<uint16_t>(data, binding.elements, bits); break;
      case 4: launch_fill<uint32_t>(data, binding.elements, bits); break;
      case 8: launch_fill<uint64_t>(data, binding.elements, bits); break;
      default: throw HarnessError(fmt::format("cannot poison {} elements", dtype_name(binding.dtype)));
    }
  }
  void synchronize() override {
    WORKER_CUDA_CHECK(cudaDeviceSynchronize());
    WORKER_CUDA_CHECK(cudaGetLastError());
  }
  std::unique_ptr<CallTimer> make_timer() override { return std::make_unique<CudaTimer>(); }

 private:
  int device_index_;
  std::string name_;
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cuda_backend(int device_index) {
  return std::make_unique<CudaBackend>(device_index);
}

}  // namespace harness
