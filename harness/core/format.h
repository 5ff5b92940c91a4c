// Number formatting shared by the text outputs.
#pragma once

#include <optional>
#include <string>

namespace harness {

std::string format_bandwidth(double bytes_per_second);       // "123.4 GB/s", "41.7 MB/s" below 1 GB/s
std::string format_flop_rate(double flops_per_second);       // "41.3 TFLOP/s", "812.0 GFLOP/s" below 1 TFLOP/s
std::string format_duration_ns(double ns);                   // "812 ns", "41.2 us", "3.07 ms", "1.20 s"
std::string format_bytes(double bytes);                      // "128.0 MiB"
std::string format_percent(std::optional<double> fraction);  // "83.1%", "n/a"
// Free text (anything from a submission or a results file) made inert for
// Markdown, in a table cell or inside a sentence: no line breaks, no HTML,
// no links, code spans or emphasis of its own, pipes escaped. Cut at
// max_length bytes ("..." then).
std::string markdown_cell(const std::string& text, size_t max_length = 300);
// Text as one inline code span, whatever backticks it holds.
std::string markdown_code(const std::string& text);
// Text as a fenced code block (with its final newline), whatever fences it holds.
std::string markdown_code_block(const std::string& text);

}  // namespace harness
