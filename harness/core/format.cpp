#include "harness/core/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace harness {

std::string format_bandwidth(double bytes_per_second) {
  if (bytes_per_second < 1e9) return fmt::format("{:.1f} MB/s", bytes_per_second / 1e6);
  return fmt::format("{:.1f} GB/s", bytes_per_second / 1e9);
}

std::string format_flop_rate(double flops_per_second) {
  if (flops_per_second < 1e12) return fmt::format("{:.1f} GFLOP/s", flops_per_second / 1e9);
  return fmt::format("{:.1f} TFLOP/s", flops_per_second / 1e12);
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

namespace {

bool alphanumeric(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The first max_length bytes of text, not cutting a UTF-8 sequence.
std::string clipped(const std::string& text, size_t max_length, bool* cut) {
  *cut = text.size() > max_length;
  if (!*cut) return text;
  size_t end = max_length;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

// The longest run of backticks in text.
size_t longest_backtick_run(const std::string& text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string markdown_cell(const std::string& text, size_t max_length) {
  bool cut = false;
  const std::string kept = clipped(text, max_length, &cut);
  std::string out;
  for (size_t i = 0; i < kept.size(); ++i) {
    const char c = kept[i];
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '|':
      case '~':
        out += '\\';
        out += c;
        break;
      case '_': {
        // Inside a word an underscore is literal (GitHub); elsewhere it may open emphasis.
        const bool inside_word = i > 0 && i + 1 < kept.size() && alphanumeric(kept[i - 1]) && alphanumeric(kept[i + 1]);
        out += inside_word ? "_" : "\\_";
        break;
      }
      case '<': out += "&lt;"; break;  // no HTML: a comment would hide the rest of the report
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default:
        // A line break would end the cell or start a heading, a table, a list.
        out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? ' ' : c;
    }
  }
  return cut ? out + "..." : out;
}

std::string markdown_code(const std::string& text) {
  std::string flat = text;
  for (char& c : flat) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  const std::string fence(longest_backtick_run(flat) + 1, '`');
  // A space inside the fence keeps a leading or trailing backtick apart from it.
  const bool pad = !flat.empty() && (flat.front() == '`' || flat.back() == '`');
  return fence + (pad ? " " : "") + flat + (pad ? " " : "") + fence;
}

std::string markdown_code_block(const std::string& text) {
  const std::string fence(std::max<size_t>(3, longest_backtick_run(text) + 1), '`');
  std::string body = text;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return fence + "\n" + body + fence + "\n";
}

}  // namespace harness
