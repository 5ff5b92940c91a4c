// Linked instead of cuda_device.cu when the project is built without CUDA.
#include "harness/core/error.h"
#include "harness/device/device_info.h"

namespace harness {

std::vector<DeviceInfo> discover_cuda_devices() {
  DeviceInfo none;
  none.id = "cuda";
  none.kind = "cuda";
  none.available = false;
  none.unavailable_reason = "the harness was built without CUDA (no CUDA compiler at configure time)";
  return {none};
}

PeakBandwidth measure_cuda_peak(int, bool) { HARNESS_FAIL("the harness was built without CUDA"); }

}  // namespace harness
