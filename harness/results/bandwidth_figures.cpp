#include "harness/results/bandwidth_figures.h"

#include "harness/device/roofline.h"

namespace harness {

void record_bandwidth(CaseResult& result, const PeakBandwidth* peak) {
  if (!result.timing || result.bytes.total() <= 0 || result.timing->scored_median_ns() <= 0) return;
  result.bandwidth = result.bytes.total() / (result.timing->scored_median_ns() * 1e-9);
  const double roofline = peak ? roofline_bytes_per_second(*peak, result.bytes) : 0;
  if (roofline > 0) {
    result.roofline = roofline;
    result.peak_fraction = *result.bandwidth / roofline;
  }
}

void rederive_bandwidth(RunResults& results, const std::string& device_id, const PeakBandwidth& peak) {
  for (DeviceInfo& device : results.devices) {
    if (device.id == device_id) device.peak = peak;
  }
  for (EntryResult& entry : results.entries) {
    if (entry.device != device_id) continue;
    for (CaseResult& c : entry.cases) record_bandwidth(c, &peak);
  }
}

}  // namespace harness
