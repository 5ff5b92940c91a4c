#include "harness/device/peak_cache.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>

#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/device/peak_json.h"

namespace harness {

namespace {

constexpr const char* kSchema = "harness.peaks/v1";
// Bumped whenever a measuring method changes, so that figures taken the old
// way are measured again rather than mixed with new ones.
constexpr int kMethodVersion = 2;
// A stored peak older than this is measured again (and kept at the best of both).
constexpr double kPeakMaxAgeDays = 7;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

nlohmann::json read_document(const std::string& path) {
  nlohmann::json document = nlohmann::json::parse(read_text_file(path));
  if (!document.is_object() || document.value("schema", "") != kSchema || !document.contains("entries") ||
      !document["entries"].is_object()) {
    throw UsageError(fmt::format("{} is not a peak cache of schema {}", path, kSchema));
  }
  return document;
}

// Days since a measurement's UTC time stamp; infinity for one that cannot be read.
double age_days(const std::string& measured_at) {
  std::tm tm{};
  const char* end = strptime(measured_at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end != '\0') return std::numeric_limits<double>::infinity();
  return std::difftime(std::time(nullptr), timegm(&tm)) / 86400.0;
}

}  // namespace

std::string peak_cache_path() {
  std::filesystem::path folder;
  if (const std::string chosen = env("HARNESS_CACHE_DIR"); !chosen.empty()) {
    folder = chosen;
  } else if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
    folder = std::filesystem::path(xdg) / "kernel-harness";
  } else if (const std::string home = env("HOME"); !home.empty()) {
    folder = std::filesystem::path(home) / ".cache" / "kernel-harness";
  } else {
    folder = std::filesystem::temp_directory_path() / "kernel-harness";
  }
  return (folder / "peaks.json").string();
}

std::string peak_cache_key(const DeviceInfo& device, const HostInfo& host) {
  return fmt::format("{} | {} | {} | {} units | {} bytes | method {}", host.hostname, device.id, device.name,
                     device.compute_units, device.memory_bytes, kMethodVersion);
}

std::optional<PeakBandwidth> read_cached_peak(const std::string& path, const std::string& key, bool full_wanted,
                                              std::string& problem) {
  if (!file_exists(path)) return std::nullopt;
  try {
    const nlohmann::json document = read_document(path);
    const auto& entries = document["entries"];
    if (!entries.contains(key)) return std::nullopt;
    PeakBandwidth peak = peak_from_json(entries[key]);
    if (full_wanted && peak.quick) return std::nullopt;
    if (!(peak.copy_bytes_per_second > 0) || !(peak.read_bytes_per_second > 0)) {
      problem = fmt::format("the cached peak for '{}' in {} is not a positive bandwidth; measuring again", key, path);
      return std::nullopt;
    }
    peak.cached_from = path;
    return peak;
  } catch (const std::exception& e) {
    problem = fmt::format("ignoring the peak cache {}: {}", path, e.what());
    return std::nullopt;
  }
}

PeakBandwidth remember_peak(const std::string& path, const std::string& key, const PeakBandwidth& fresh) {
  nlohmann::json document{{"schema", kSchema}, {"entries", nlohmann::json::object()}};
  if (file_exists(path)) {
    try {
      document = read_document(path);
    } catch (const std::exception&) {
      // An unreadable cache is replaced: it only ever held measurements.
    }
  }
  PeakBandwidth stored = fresh;
  if (document["entries"].contains(key)) {
    try {
      const PeakBandwidth kept = peak_from_json(document["entries"][key]);
      if (kept.quick == fresh.quick) stored = best_of(kept, fresh);
      if (!kept.quick && fresh.quick) stored = kept;
    } catch (const std::exception&) {
      // A malformed entry is replaced by the measurement.
    }
  }
  stored.cached_from.clear();
  document["entries"][key] = to_json(stored);
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  write_file_atomically(path, document.dump(1) + "\n");
  return stored;
}

PeakBandwidth obtain_peak(const DeviceInfo& device, bool quick, PeakSource preferred, std::string& note) {
  const std::string path = peak_cache_path();
  const std::string key = peak_cache_key(device, query_host());
  std::string problem;
  std::string why = "measured now";
  if (preferred == PeakSource::cache) {
    if (auto cached = read_cached_peak(path, key, !quick, problem)) {
      if (age_days(cached->measured_at) <= kPeakMaxAgeDays) {
        note = fmt::format(
            "peak measured {}{}, the best of {} measurement{} (cached in {}; `harness peak` measures "
            "again)",
            cached->measured_at, cached->quick ? ", quick" : "", cached->measurements,
            cached->measurements == 1 ? "" : "s", path);
        return *cached;
      }
      why = fmt::format("measured again (the cached one, of {}, is over {:.0f} days old)", cached->measured_at,
                        kPeakMaxAgeDays);
    }
  }
  PeakBandwidth peak = measure_peak(device, quick);
  note = problem.empty() ? "" : problem + "; ";
  try {
    peak = remember_peak(path, key, peak);
    note += fmt::format("peak {}{}, stored in {} as the best of {} measurement{}", why, quick ? " (quick)" : "", path,
                        peak.measurements, peak.measurements == 1 ? "" : "s");
  } catch (const std::exception& e) {
    note += fmt::format("peak {}{}; not stored: {}", why, quick ? " (quick)" : "", e.what());
  }
  return peak;
}

}  // namespace harness
