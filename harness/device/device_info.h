// The devices a run can use, and their measured bandwidth ceilings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness {

// Bandwidth measured by the harness itself on one device.
struct PeakBandwidth {
  std::string method;                 // how `copy` was measured
  double copy_bytes_per_second = 0;   // bytes read + written per second: "the peak"
  double read_bytes_per_second = 0;   // a read-only sweep of the same memory
  double write_bytes_per_second = 0;  // a write-only fill of the same memory (0: not measured)
  double buffer_bytes = 0;            // size of each array
  int repetitions = 0;                // best of this many
  int threads = 0;                    // cpu: threads used
  bool quick = false;                 // smaller arrays, fewer repetitions
  std::string measured_at;            // UTC time of the measurement
  std::string cached_from;            // the cache file it was read from; empty: measured by this process
  int measurements = 1;               // each ceiling is the best of this many measurements (best_of)

  // The fastest any case could move its bytes on this device: the fastest
  // ceiling plus 10% for the noise of the measurement. Each case is judged
  // against its own roofline (harness/device/roofline.h), never above this.
  double ceiling_bytes_per_second() const;
};

struct DeviceInfo {
  std::string id;    // "cpu", "cuda:0", ...
  std::string kind;  // "cpu" | "cuda"
  int index = 0;     // cuda device ordinal
  std::string name;
  bool available = true;
  std::string unavailable_reason;
  int compute_units = 0;  // cpu: logical cores; cuda: multiprocessors
  uint64_t memory_bytes = 0;
  uint64_t cache_bytes = 0;        // cpu: last-level cache; cuda: L2
  std::string compute_capability;  // cuda only, e.g. "9.0"
  std::string driver_version;      // cuda only
  std::string runtime_version;     // cuda only
  std::optional<PeakBandwidth> peak;
};

// The cpu, plus one entry per CUDA device (or one unavailable "cuda" entry
// that says why there is none). Measures nothing.
std::vector<DeviceInfo> discover_devices();

// Measures a device's peak; `quick` uses smaller arrays and fewer repetitions.
PeakBandwidth measure_peak(const DeviceInfo& device, bool quick);

// Each ceiling the larger of two measurements of one device, the rest
// (method, size, time) the newer's: a busy moment only ever lowers a
// measurement, so the best seen is the nearest to the device's own.
PeakBandwidth best_of(const PeakBandwidth& kept, const PeakBandwidth& fresh);

PeakBandwidth measure_cpu_peak(uint64_t last_level_cache_bytes, bool quick);

// cuda_device.cu, or cuda_device_unavailable.cpp without CUDA.
std::vector<DeviceInfo> discover_cuda_devices();
PeakBandwidth measure_cuda_peak(int device_index, bool quick);

}  // namespace harness
