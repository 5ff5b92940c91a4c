// The measured peak of each device, kept per host between invocations as
// the best of its measurements (docs/ARCHITECTURE.md, Peaks): measuring
// takes seconds and gigabytes, and a busy moment only lowers a measurement.
#pragma once

#include <optional>
#include <string>

#include "harness/core/system_info.h"
#include "harness/device/device_info.h"

namespace harness {

// $HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/kernel-harness, else
// $HOME/.cache/kernel-harness; the file is peaks.json there.
std::string peak_cache_path();

// What identifies "this device on this host" for a stored peak.
std::string peak_cache_key(const DeviceInfo& device, const HostInfo& host);

// The stored peak for `key`, if any; a quick measurement does not serve a
// run that wants a full one. A cache that cannot be read is reported in
// `problem` and treated as empty: it can only cost a measurement.
std::optional<PeakBandwidth> read_cached_peak(const std::string& path, const std::string& key, bool full_wanted,
                                              std::string& problem);

// Stores `fresh` for `key` as the best of it and the stored entry (a full
// measurement replaces a quick one, a quick one leaves a full one), keeping
// the other entries; atomic. Returns what is stored now. The stored figures
// thus only rise: a measurement on a busy moment cannot lower them.
PeakBandwidth remember_peak(const std::string& path, const std::string& key, const PeakBandwidth& fresh);

enum class PeakSource { cache, measure };

// The peak a run uses on `device`: the cached one, unless it is over a week
// old or `preferred` is measure; otherwise measured now and remembered.
// `note` says which (and any cache problem), for the console.
PeakBandwidth obtain_peak(const DeviceInfo& device, bool quick, PeakSource preferred, std::string& note);

}  // namespace harness
