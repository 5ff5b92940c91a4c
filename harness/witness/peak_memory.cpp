#include "harness/witness/peak_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace harness {

namespace {

// Fields of /proc/<pid>/status in bytes; false unless all were found.
bool read_status(pid_t pid, int64_t& peak, int64_t& resident, int64_t& shared) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  int found = 0;
  std::string key;
  while (status >> key) {
    int64_t* field = key == "VmHWM:" ? &peak : key == "VmRSS:" ? &resident : key == "RssShmem:" ? &shared : nullptr;
    if (field != nullptr) {
      int64_t kib = 0;
      if (!(status >> kib)) return false;
      *field = kib * 1024;
      ++found;
    }
    status.ignore(1 << 12, '\n');
  }
  return found == 3;
}

}  // namespace

std::optional<PeakWindow> open_peak_window(pid_t pid) {
  PeakWindow window;
  window.pid = pid;
  // "5" resets the peak resident set size to the current one (proc(5)).
  {
    std::ofstream clear(fmt::format("/proc/{}/clear_refs", pid));
    clear << "5";
    clear.flush();
    window.reset = clear.good();
  }
  int64_t peak = 0;
  if (!read_status(pid, peak, window.resident, window.shared)) return std::nullopt;
  // Without a reset the lifetime peak stands in: never less than the truth.
  if (!window.reset) window.resident = std::min(window.resident, peak);
  return window;
}

std::optional<int64_t> peak_growth(const PeakWindow& window, int64_t mapped_tensor_bytes) {
  int64_t peak = 0, resident = 0, shared = 0;
  if (!read_status(window.pid, peak, resident, shared)) return std::nullopt;
  const int64_t bytes = std::max<int64_t>(mapped_tensor_bytes, 0);
  const int64_t tensors = std::clamp<int64_t>(shared - window.shared, 0, bytes) + window.contract_copies * bytes;
  return std::max<int64_t>(0, peak - window.resident - tensors);
}

}  // namespace harness
