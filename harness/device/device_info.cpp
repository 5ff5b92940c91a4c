#include "harness/device/device_info.h"

#include <algorithm>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/system_info.h"

namespace harness {

double PeakBandwidth::ceiling_bytes_per_second() const {
  return 1.10 * std::max({copy_bytes_per_second, read_bytes_per_second, write_bytes_per_second});
}

std::vector<DeviceInfo> discover_devices() {
  const HostInfo host = query_host();
  DeviceInfo cpu;
  cpu.id = "cpu";
  cpu.kind = "cpu";
  cpu.name = host.cpu_model;
  cpu.compute_units = host.logical_cores;
  cpu.memory_bytes = host.memory_bytes;
  cpu.cache_bytes = host.last_level_cache_bytes;
  std::vector<DeviceInfo> devices{cpu};
  for (auto& d : discover_cuda_devices()) devices.push_back(std::move(d));
  return devices;
}

PeakBandwidth measure_peak(const DeviceInfo& device, bool quick) {
  HARNESS_CHECK(device.available, "device {} is not available: {}", device.id, device.unavailable_reason);
  PeakBandwidth peak;
  if (device.kind == "cpu") {
    peak = measure_cpu_peak(device.cache_bytes, quick);
  } else if (device.kind == "cuda") {
    peak = measure_cuda_peak(device.index, quick);
  } else {
    HARNESS_FAIL("unknown device kind '{}'", device.kind);
  }
  peak.measured_at = utc_timestamp();
  return peak;
}

PeakBandwidth best_of(const PeakBandwidth& kept, const PeakBandwidth& fresh) {
  PeakBandwidth best = fresh;
  best.copy_bytes_per_second = std::max(kept.copy_bytes_per_second, fresh.copy_bytes_per_second);
  best.read_bytes_per_second = std::max(kept.read_bytes_per_second, fresh.read_bytes_per_second);
  best.write_bytes_per_second = std::max(kept.write_bytes_per_second, fresh.write_bytes_per_second);
  best.measurements = kept.measurements + fresh.measurements;
  return best;
}

}  // namespace harness
