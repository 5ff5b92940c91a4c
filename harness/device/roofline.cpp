#include "harness/device/roofline.h"

#include <algorithm>

namespace harness {

double roofline_bytes_per_second(const PeakBandwidth& peak, const ByteModel& bytes) {
  const double read = std::max(peak.read_bytes_per_second, peak.copy_bytes_per_second);
  const double write = std::max(peak.write_bytes_per_second, peak.copy_bytes_per_second);
  if (read <= 0 || write <= 0 || bytes.total() <= 0) return 0;
  const double seconds = bytes.read / read + bytes.written / write;
  return bytes.total() / seconds;
}

double roofline_ceiling_bytes_per_second(const PeakBandwidth& peak, const ByteModel& bytes) {
  return 1.10 * roofline_bytes_per_second(peak, bytes);
}

}  // namespace harness
