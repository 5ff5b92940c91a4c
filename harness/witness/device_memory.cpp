#include "harness/witness/device_memory.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace harness {

namespace {

// The few NVML declarations used (nvml.h, stable since CUDA 11): a handle is
// opaque, 0 is NVML_SUCCESS, NVML_ERROR_INSUFFICIENT_SIZE is 7.
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlInsufficientSize = 7;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;

// nvmlProcessInfo_t of the _v2 and _v3 entry points.
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct Nvml {
  int (*init)() = nullptr;
  int (*device_by_index)(unsigned, NvmlDevice*) = nullptr;
  int (*compute_processes)(NvmlDevice, unsigned*, NvmlProcessInfo*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  std::string why_not;  // empty once loaded and initialised
};

template <class F>
bool find(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(::dlsym(library, name));
  return function != nullptr;
}

// Loaded and initialised once per harness process; never unloaded.
const Nvml& nvml() {
  static Nvml loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      loaded.why_not = fmt::format("NVML not loadable ({})", ::dlerror());
      return;
    }
    const bool found = find(library, "nvmlInit_v2", loaded.init) &&
                       find(library, "nvmlDeviceGetHandleByIndex_v2", loaded.device_by_index) &&
                       (find(library, "nvmlDeviceGetComputeRunningProcesses_v3", loaded.compute_processes) ||
                        find(library, "nvmlDeviceGetComputeRunningProcesses_v2", loaded.compute_processes)) &&
                       find(library, "nvmlErrorString", loaded.error_string);
    if (!found) {
      loaded.why_not = "NVML lacks nvmlDeviceGetComputeRunningProcesses_v2/_v3 (a driver older than CUDA 11)";
      return;
    }
    const int status = loaded.init();
    if (status != kNvmlSuccess) loaded.why_not = fmt::format("nvmlInit_v2: {}", loaded.error_string(status));
  });
  return loaded;
}

}  // namespace

MemoryJudgement judge_device_memory(int64_t claimed_bytes, int64_t baseline_own, int64_t bytes,
                                    int64_t harness_tensors) {
  return judge_growth(claimed_bytes, bytes - harness_tensors - baseline_own, kDeviceMemoryAllowanceBytes, "may hold",
                      fmt::format("the device memory its worker uses (the driver's figure, {} bytes, less {} bytes of "
                                  "copies of the harness's tensors)",
                                  bytes, harness_tensors));
}

DeviceMemoryReading device_memory_of_process(pid_t pid, unsigned nvml_index) {
  const Nvml& n = nvml();
  if (!n.why_not.empty()) return {std::nullopt, n.why_not};
  NvmlDevice device = nullptr;
  int status = n.device_by_index(nvml_index, &device);
  if (status != kNvmlSuccess) {
    return {std::nullopt, fmt::format("nvmlDeviceGetHandleByIndex_v2({}): {}", nvml_index, n.error_string(status))};
  }
  // The list can grow between the count and the read: try a few times.
  std::vector<NvmlProcessInfo> processes(8);
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto count = static_cast<unsigned>(processes.size());
    status = n.compute_processes(device, &count, processes.data());
    if (status == kNvmlInsufficientSize) {
      processes.resize(count + 8);
      continue;
    }
    if (status != kNvmlSuccess) {
      return {std::nullopt, fmt::format("nvmlDeviceGetComputeRunningProcesses: {}", n.error_string(status))};
    }
    for (unsigned i = 0; i < count; ++i) {
      if (processes[i].pid != static_cast<unsigned>(pid)) continue;
      if (processes[i].usedGpuMemory == kNvmlValueNotAvailable) {
        return {std::nullopt, "NVML does not report per-process memory on this system"};
      }
      return {static_cast<int64_t>(processes[i].usedGpuMemory), ""};
    }
    return {std::nullopt,
            fmt::format("NVML lists no compute process {} on GPU {} (another PID namespace?)", pid, nvml_index)};
  }
  return {std::nullopt, "NVML's process list kept growing"};
}

}  // namespace harness
