#include "harness/runner/speed_of_light.h"

#include <fmt/format.h>

#include "harness/core/clock.h"
#include "harness/device/roofline.h"
#include "harness/results/bandwidth_figures.h"

namespace harness {

namespace {

// A measurement this recent stands for "then and there".
constexpr double kRemeasureAfterSeconds = 30;

// Beyond the roofline plus its 10% (the verdict's test), or, with `plain`,
// above the roofline itself: a cold case faster than the cached ceilings
// say is possible shows them low, and is cause to measure them again.
bool beyond(const CaseResult& result, const PeakBandwidth& peak, bool plain = false) {
  if (!result.bandwidth || !result.timing || !result.timing->cache_cold) return false;
  const double ceiling =
      plain ? roofline_bytes_per_second(peak, result.bytes) : roofline_ceiling_bytes_per_second(peak, result.bytes);
  return ceiling > 0 && *result.bandwidth > ceiling;
}

std::string ceilings(const PeakBandwidth& p) {
  return fmt::format("copy {:.1f}, read {:.1f}, write {:.1f} GB/s", p.copy_bytes_per_second / 1e9,
                     p.read_bytes_per_second / 1e9, p.write_bytes_per_second / 1e9);
}

}  // namespace

SpeedOfLight::SpeedOfLight(Measure measure, Remember remember)
    : measure_(std::move(measure)), remember_(std::move(remember)) {}

std::optional<PeakBandwidth> SpeedOfLight::peak(const DeviceInfo& device) const {
  const auto it = raised_.find(device.id);
  if (it != raised_.end()) return it->second;
  return device.peak;
}

std::optional<std::string> SpeedOfLight::judge(CaseResult& result, const DeviceInfo& device) {
  const std::optional<PeakBandwidth> before = peak(device);
  if (!before || !beyond(result, *before, true)) return std::nullopt;
  const int64_t now = monotonic_ns();
  const auto last = measured_ns_.find(device.id);
  const bool recent =
      last != measured_ns_.end() && static_cast<double>(now - last->second) / 1e9 < kRemeasureAfterSeconds;
  if (!recent) {
    PeakBandwidth best = best_of(*before, measure_(device));
    if (remember_) best = remember_(device, best);
    measured_ns_[device.id] = monotonic_ns();
    raised_[device.id] = best;
    record_bandwidth(result, &best);
  }
  const PeakBandwidth judged = raised_.at(device.id);
  if (!beyond(result, judged)) return std::nullopt;
  const double ceiling = roofline_ceiling_bytes_per_second(judged, result.bytes);
  const std::string now_text = ceilings(judged);
  const std::string began_text = device.peak ? ceilings(*device.peak) : "none";
  return fmt::format(
      "{:.1f} GB/s is beyond this case's roofline of {:.1f} GB/s plus 10% ({:.0f} bytes read, {:.0f} written) at the "
      "device's ceilings measured again {} ({}; the run began with {}): {:.1f} us per call",
      *result.bandwidth / 1e9, ceiling / 1.10 / 1e9, result.bytes.read, result.bytes.written,
      recent ? "less than a minute ago" : "just now", now_text, began_text, result.timing->scored_median_ns() / 1e3);
}

}  // namespace harness
