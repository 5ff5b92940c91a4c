// The log file a child process's stderr (and stdout, when it is not the
// protocol) is appended to, read back in pieces: what it printed since the
// last look, for the case's results and for crash messages.
#pragma once

#include <cstddef>
#include <string>

namespace harness {

// How much of a child's last output a verdict's message quotes.
constexpr size_t kOutputInMessages = 1500;

class ProcessLog {
 public:
  explicit ProcessLog(std::string path);  // truncates the file
  const std::string& path() const { return path_; }
  // Once the file holds this much at a drain, it is emptied.
  static constexpr size_t kTruncateAtBytes = 1 << 20;

  // The last max_bytes of what was written since the last drain (saying
  // how many bytes before it were not kept), without consuming it.
  std::string tail(size_t max_bytes) const;
  // The same, and consumed; empties the file once it is kTruncateAtBytes.
  std::string drain(size_t max_bytes);

 private:
  std::string path_;
  size_t offset_ = 0;
};

}  // namespace harness
