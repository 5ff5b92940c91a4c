// A timed case's bandwidth (its byte model over the time the scores use)
// and its fraction of its roofline at a device's peak: one computation for
// the case as it is timed and for every case again when the peak rose.
#pragma once

#include <string>

#include "harness/device/device_info.h"
#include "harness/results/results.h"

namespace harness {

// Nothing without a timing or a byte model; no roofline without a peak.
void record_bandwidth(CaseResult& result, const PeakBandwidth* peak);

// The device's peak in the results replaced by `peak`, and the roofline
// figures of every timed case on it computed again.
void rederive_bandwidth(RunResults& results, const std::string& device_id, const PeakBandwidth& peak);

}  // namespace harness
