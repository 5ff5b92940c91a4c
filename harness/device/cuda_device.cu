// CUDA devices: discovery and the device-to-device copy that defines their
// peak bandwidth. Runs in the harness process, never in a worker.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "harness/core/error.h"
#include "harness/device/device_info.h"

namespace harness {

namespace {

#define DEVICE_CUDA_CHECK(call)                                                              \
  do {                                                                                       \
    const cudaError_t status_ = (call);                                                      \
    HARNESS_CHECK(status_ == cudaSuccess, "{}: {} ({})", #call, cudaGetErrorString(status_), \
                  cudaGetErrorName(status_));                                                \
  } while (false)

std::string version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

// Reads every 16-byte word once; one xor-folded value per thread goes out so
// the loads cannot be removed.
__global__ void read_sweep(const uint4* data, size_t count, uint4* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
    acc.z ^= v.z;
    acc.w ^= v.w;
  }
  if ((acc.x & acc.y & acc.z & acc.w) == 0xFFFFFFFFu) sink[0] = acc;  // practically never
}

class EventPair {
 public:
  EventPair() {
    DEVICE_CUDA_CHECK(cudaEventCreate(&start));
    DEVICE_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  float milliseconds() {
    DEVICE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    DEVICE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

}  // namespace

std::vector<DeviceInfo> discover_cuda_devices() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    DeviceInfo none;
    none.id = "cuda";
    none.kind = "cuda";
    none.available = false;
    none.unavailable_reason = status != cudaSuccess ? fmt::format("no usable CUDA device (cudaGetDeviceCount: {})",
                                                                  cudaGetErrorString(status))
                                                    : "no CUDA device";
    (void)cudaGetLastError();
    return {none};
  }
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    DEVICE_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    DeviceInfo d;
    d.id = fmt::format("cuda:{}", i);
    d.kind = "cuda";
    d.index = i;
    d.name = prop.name;
    d.compute_units = prop.multiProcessorCount;
    d.memory_bytes = prop.totalGlobalMem;
    d.cache_bytes = static_cast<uint64_t>(prop.l2CacheSize);
    d.compute_capability = fmt::format("{}.{}", prop.major, prop.minor);
    d.driver_version = version_text(driver);
    d.runtime_version = version_text(runtime);
    devices.push_back(std::move(d));
  }
  return devices;
}

PeakBandwidth measure_cuda_peak(int device_index, bool quick) {
  DEVICE_CUDA_CHECK(cudaSetDevice(device_index));
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  DEVICE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Far beyond L2 (tens of MB), well within free memory.
  size_t bytes = quick ? (256u << 20) : (size_t{1} << 30);
  bytes = std::min(bytes, free_bytes / 4) / 16 * 16;
  void* source = nullptr;
  void* target = nullptr;
  DEVICE_CUDA_CHECK(cudaMalloc(&source, bytes));
  DEVICE_CUDA_CHECK(cudaMalloc(&target, bytes));
  DEVICE_CUDA_CHECK(cudaMemset(source, 1, bytes));
  DEVICE_CUDA_CHECK(cudaMemset(target, 0, bytes));

  const int repetitions = quick ? 5 : 20;
  EventPair events;
  float best_copy = 1e30f;
  float best_read = 1e30f;
  float best_write = 1e30f;
  for (int r = 0; r < repetitions + 1; ++r) {  // the first round warms up
    DEVICE_CUDA_CHECK(cudaEventRecord(events.start));
    DEVICE_CUDA_CHECK(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDeviceToDevice));
    DEVICE_CUDA_CHECK(cudaEventRecord(events.stop));
    const float copy_ms = events.milliseconds();

    DEVICE_CUDA_CHECK(cudaEventRecord(events.start));
    read_sweep<<<2048, 512>>>(static_cast<const uint4*>(source), bytes / 16, static_cast<uint4*>(target));
    DEVICE_CUDA_CHECK(cudaGetLastError());
    DEVICE_CUDA_CHECK(cudaEventRecord(events.stop));
    const float read_ms = events.milliseconds();

    DEVICE_CUDA_CHECK(cudaEventRecord(events.start));
    DEVICE_CUDA_CHECK(cudaMemsetAsync(target, r & 0xff, bytes));
    DEVICE_CUDA_CHECK(cudaEventRecord(events.stop));
    const float write_ms = events.milliseconds();
    if (r > 0) {
      best_copy = std::min(best_copy, copy_ms);
      best_read = std::min(best_read, read_ms);
      best_write = std::min(best_write, write_ms);
    }
  }
  cudaFree(source);
  cudaFree(target);

  PeakBandwidth peak;
  peak.method = "cudaMemcpy device-to-device";
  peak.copy_bytes_per_second = 2.0 * static_cast<double>(bytes) / (best_copy * 1e-3);
  peak.read_bytes_per_second = static_cast<double>(bytes) / (best_read * 1e-3);
  peak.write_bytes_per_second = static_cast<double>(bytes) / (best_write * 1e-3);
  peak.buffer_bytes = static_cast<double>(bytes);
  peak.repetitions = repetitions;
  peak.quick = quick;
  return peak;
}

}  // namespace harness
