// The byte model of a case and the roofline it is judged against.
#pragma once

#include "harness/device/device_info.h"

namespace harness {

// The fewest bytes any implementation of a case must read and write.
struct ByteModel {
  double read = 0;
  double written = 0;
  double total() const { return read + written; }
};

// The fastest a case can move its byte model on a device: its reads at the
// read ceiling, then its writes at the write ceiling. A read-only kernel is
// judged against the read sweep, a copy against both, a fill against the
// write ceiling. Each ceiling is taken as at least the copy peak, so the
// roofline is never below what a plain copy shows the memory can do (a peak
// cached before write ceilings were measured has none). 0 without a peak.
double roofline_bytes_per_second(const PeakBandwidth& peak, const ByteModel& bytes);

// Beyond this a correct answer cannot be real: the roofline plus 10% for the
// noise of the peak measurement itself.
double roofline_ceiling_bytes_per_second(const PeakBandwidth& peak, const ByteModel& bytes);

}  // namespace harness
