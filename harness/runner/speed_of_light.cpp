#include "harness/runner/speed_of_light.h"

#include <fmt/format.h>

#include "harness/device/roofline.h"

namespace harness {

std::optional<std::string> impossible_speed(const CaseResult& result, const DeviceInfo& device) {
  if (!device.peak || !result.bandwidth || !result.timing || !result.timing->cache_cold) return std::nullopt;
  const double ceiling = roofline_ceiling_bytes_per_second(*device.peak, result.bytes);
  if (ceiling <= 0 || *result.bandwidth <= ceiling) return std::nullopt;
  return fmt::format(
      "{:.1f} GB/s is beyond this case's roofline of {:.1f} GB/s plus 10% ({:.0f} bytes read, {:.0f} written, at "
      "the measured read and write ceilings): {:.1f} us per call",
      *result.bandwidth / 1e9, ceiling / 1.10 / 1e9, result.bytes.read, result.bytes.written,
      result.timing->scored_median_ns() / 1e3);
}

}  // namespace harness
