// The verdict impossible_speed: a correct answer faster than its byte model
// allows at the device's ceilings cannot be real (skipped work, a cached
// answer). Judged only where the rotating input sets really missed the
// cache. Before it is given, the device's ceilings are measured again, then
// and there: a peak measured on a busy moment must not make honest code a
// cheat. So are they after any cold case above the roofline itself, within
// the verdict's 10% or not: the cached ceilings are then shown low. A
// device's peak only ever rises from such a measurement.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "harness/device/device_info.h"
#include "harness/results/results.h"

namespace harness {

class SpeedOfLight {
 public:
  using Measure = std::function<PeakBandwidth(const DeviceInfo&)>;
  // Keeps a raised peak beyond the run (the per-host cache) and returns
  // what it kept; empty: kept for this run only.
  using Remember = std::function<PeakBandwidth(const DeviceInfo&, const PeakBandwidth&)>;

  SpeedOfLight(Measure measure, Remember remember);

  // The device's peak in this run: its own, or the one a measurement raised.
  std::optional<PeakBandwidth> peak(const DeviceInfo& device) const;
  // The verdict's message naming the ceilings it was judged at, or nothing.
  // May measure the device again, raising its peak and the case's roofline
  // figures with it.
  std::optional<std::string> judge(CaseResult& result, const DeviceInfo& device);
  // The peaks measurements raised in this run, by device id.
  const std::map<std::string, PeakBandwidth>& raised() const { return raised_; }

 private:
  Measure measure_;
  Remember remember_;
  std::map<std::string, PeakBandwidth> raised_;
  std::map<std::string, int64_t> measured_ns_;  // when each device was last measured again
};

}  // namespace harness
