#include "harness/ipc/process_log.h"

#include <sys/stat.h>

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
  return size - offset_ > max_bytes ? "..." + text : text;
}

std::string ProcessLog::drain(size_t max_bytes) {
  std::string text = tail(max_bytes);
  offset_ = file_size(path_);
  return text;
}

}  // namespace harness
