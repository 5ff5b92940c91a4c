// The device-memory witness: what a CUDA worker holds on its GPU, read from
// the driver (NVML, loaded at run time from libnvidia-ml.so.1), not from the
// worker, whose cudaMemGetInfo would be its own word. Where NVML is missing or
// cannot see the worker (its own PID namespace), there is no reading and the
// harness says so rather than guess.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "harness/witness/memory_witness.h"

namespace harness {

struct DeviceMemoryReading {
  std::optional<int64_t> bytes;  // device memory `pid` uses on the GPU, when known
  std::string why_not;           // when not: what was missing
  // Of `bytes`, what the worker holds for the harness: its device copies of
  // the harness's tensors, as the harness counts them (device_granules of
  // each), so that what is left is the submission's.
  int64_t harness_tensors = 0;
};

// The driver hands out device memory in 2 MiB granules (NVML's per-process
// figures move in these steps): `bytes` rounded up to whole granules. An
// upper bound on what one cudaMalloc of that size adds, since the driver
// packs small allocations into a shared granule.
inline constexpr int64_t kDeviceGranuleBytes = int64_t{2} << 20;
inline int64_t device_granules(uint64_t bytes) {
  return static_cast<int64_t>((bytes + kDeviceGranuleBytes - 1) / kDeviceGranuleBytes) * kDeviceGranuleBytes;
}

// What the device's own allowance lets a claim hold beyond itself: a CUDA
// context's lazily loaded modules, a submission's scratch buffers kept for
// its next call, the granules of its allocations. Set from the honest
// submissions' figures on a GPU (docs/ARCHITECTURE.md, Witnesses).
inline constexpr int64_t kDeviceMemoryAllowanceBytes = int64_t{64} << 20;

// `baseline_own`: the worker's reading at the baseline less its copies of
// the harness's tensors then; `bytes` and `harness_tensors`: the same now.
// The claim is what the submission may hold (its claim, or more where its
// contract lets a GPU hold more).
MemoryJudgement judge_device_memory(int64_t claimed_bytes, int64_t baseline_own, int64_t bytes,
                                    int64_t harness_tensors);

// `nvml_index` is the GPU's index in NVML's order (PCI bus order), which is
// CUDA's with CUDA_DEVICE_ORDER=PCI_BUS_ID and on every one-GPU machine.
DeviceMemoryReading device_memory_of_process(pid_t pid, unsigned nvml_index);

}  // namespace harness
