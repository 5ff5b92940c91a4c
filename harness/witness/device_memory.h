// The device-memory witness: what a CUDA worker holds on its GPU, read by
// the harness from the driver (NVML's list of compute processes and the
// memory each uses), not from inside the worker, whose cudaMemGetInfo
// would be its own word.
//
// NVML is loaded at run time (libnvidia-ml.so.1, installed with the
// driver), so the harness builds and runs without it; where it is missing,
// or cannot see the worker (a container with its own PID namespace, a
// driver that hides per-process usage), there is no reading and the harness
// says so rather than guess.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace harness {

struct DeviceMemoryReading {
  std::optional<int64_t> bytes;  // device memory `pid` uses on the GPU, when known
  std::string why_not;           // when not: what was missing
};

// `nvml_index` is the GPU's index in NVML's order (PCI bus order), which is
// CUDA's with CUDA_DEVICE_ORDER=PCI_BUS_ID and on every one-GPU machine.
DeviceMemoryReading device_memory_of_process(pid_t pid, unsigned nvml_index);

}  // namespace harness
