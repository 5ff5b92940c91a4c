// Linked instead of cuda_device_memory.cu when the project is built without CUDA.
#include "harness/core/error.h"
#include "harness/device_memory/device_memory.h"

namespace harness {

std::unique_ptr<DeviceMemory> make_cuda_device_memory(int device_index) {
  HARNESS_FAIL("CUDA device memory for cuda:{}: the harness was built without CUDA", device_index);
}

}  // namespace harness
