// The harness's CUDA device memory (harness/device_memory/cuda_device_memory.cu),
// compiled for the warp emulator under a name of its own: harness_lib
// holds this build's make_cuda_device_memory (nvcc's, or the stub of a
// build without a CUDA compiler).
#pragma once

#include <memory>

#include "harness/device_memory/device_memory.h"

namespace harness {

std::unique_ptr<DeviceMemory> make_cuda_device_memory_on_emulator(int device_index);

}  // namespace harness
