#include "harness/executors/exception_headline.h"

#include <sstream>
#include <vector>

namespace harness {

std::string lead_with_exception(const std::string& message) {
  const auto start = message.find("Traceback (most recent call last):");
  if (start == std::string::npos) return message;
  std::vector<std::string> lines;
  std::istringstream in(message.substr(start));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // Frames and their source lines are indented; the exception follows the
  // last of them (after the last traceback, when exceptions were chained).
  size_t last_indented = 0;
  std::string location;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty() || (lines[i][0] != ' ' && lines[i][0] != '\t')) continue;
    last_indented = i;
    const auto file = lines[i].find("File \"");
    if (file != std::string::npos) location = lines[i].substr(file);
  }
  std::string exception;
  for (size_t i = last_indented + 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    exception += (exception.empty() ? "" : " ") + lines[i];
  }
  if (exception.empty()) return message;
  return exception + (location.empty() ? "" : " (at " + location + ")") + "\n" + message;
}

}  // namespace harness
