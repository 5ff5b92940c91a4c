#include "harness/ipc/process_log.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace harness {

namespace {
size_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}
}  // namespace

ProcessLog::ProcessLog(std::string path) : path_(std::move(path)) { std::ofstream(path_, std::ios::trunc); }

std::string ProcessLog::tail(size_t max_bytes) const {
  const size_t size = file_size(path_);
  if (size <= offset_) return "";
  const size_t length = std::min(size - offset_, max_bytes);
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(size - length));
  std::string text(length, '\0');
  in.read(text.data(), static_cast<std::streamsize>(length));
  text.resize(static_cast<size_t>(in.gcount()));
  if (size - offset_ <= max_bytes) return text;
  return fmt::format("[{} earlier bytes not kept] ...", size - offset_ - text.size()) + text;
}

std::string ProcessLog::drain(size_t max_bytes) {
  std::string text = tail(max_bytes);
  const size_t size = file_size(path_);
  // Only each case's tail is kept, so the file may go once it is large: a
  // submission printing 100 MB per call must not fill the disk over a run.
  // The child appends (O_APPEND), so its next write lands at the new end.
  if (size >= kTruncateAtBytes && ::truncate(path_.c_str(), 0) == 0) {
    offset_ = 0;
  } else {
    offset_ = size;
  }
  return text;
}

}  // namespace harness
