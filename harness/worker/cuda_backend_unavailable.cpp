// Linked instead of cuda_backend.cu when the project is built without CUDA.
#include "harness/worker/device_backend.h"

namespace harness {

std::unique_ptr<DeviceBackend> make_cuda_backend(int) {
  throw HarnessError("this worker was built without CUDA (no CUDA compiler at configure time)");
}

}  // namespace harness
