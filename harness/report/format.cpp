#include "harness/report/format.h"

#include <fmt/format.h>

namespace harness {

std::string format_bandwidth(double bytes_per_second) {
  if (bytes_per_second < 1e9) return fmt::format("{:.1f} MB/s", bytes_per_second / 1e6);
  return fmt::format("{:.1f} GB/s", bytes_per_second / 1e9);
}

std::string format_duration_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

std::string format_bytes(double bytes) {
  if (bytes < 1024) return fmt::format("{:.0f} B", bytes);
  if (bytes < 1024.0 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024);
  if (bytes < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / 1024 / 1024);
  return fmt::format("{:.2f} GiB", bytes / 1024 / 1024 / 1024);
}

std::string format_percent(std::optional<double> fraction) {
  return fraction ? fmt::format("{:.1f}%", 100 * *fraction) : "n/a";
}

std::string markdown_cell(const std::string& text, size_t max_length) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  if (out.size() > max_length) out = out.substr(0, max_length) + "...";
  return out;
}

}  // namespace harness
