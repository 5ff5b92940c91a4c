#include "harness/core/files.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "harness/core/error.h"

namespace harness {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  // One temporary per process: two processes writing the same file (two runs
  // storing this host's peak) would otherwise fill and rename one another's.
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError(fmt::format("cannot write '{}': {}", temporary, std::strerror(errno)));
    out << content;
    out.flush();
    HARNESS_CHECK(out.good(), "writing '{}' failed", temporary);
  }
  HARNESS_CHECK_ERRNO(::rename(temporary.c_str(), path.c_str()), "renaming '{}' to '{}'", temporary, path);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string executable_dir() {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  HARNESS_CHECK_ERRNO(n, "readlink(/proc/self/exe)");
  return std::filesystem::path(std::string(buffer.data(), static_cast<size_t>(n))).parent_path().string();
}

std::string memory_backed_temp_directory(unsigned long long room) {
  const std::string fallback = std::filesystem::temp_directory_path().string();
  if (std::getenv("TMPDIR") != nullptr) return fallback;
  struct statfs fs {};
  if (::statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC || ::access("/dev/shm", W_OK | X_OK) != 0) {
    return fallback;
  }
  const unsigned long long free_bytes =
      static_cast<unsigned long long>(fs.f_bavail) * static_cast<unsigned long long>(fs.f_bsize);
  return free_bytes >= room ? "/dev/shm" : fallback;
}

bool path_holds(const std::string& outer, const std::string& inner) {
  const auto resolve = [](const std::string& path) -> std::optional<std::filesystem::path> {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(path, ec);
    if (ec) return std::nullopt;
    auto resolved = std::filesystem::weakly_canonical(absolute, ec);
    if (ec || resolved.empty()) return std::nullopt;
    return resolved;
  };
  const auto outer_path = resolve(outer), inner_path = resolve(inner);
  if (!outer_path || !inner_path) return false;
  const std::filesystem::path& o = *outer_path;
  const std::filesystem::path& i = *inner_path;
  auto a = o.begin(), b = i.begin();
  for (; a != o.end() && b != i.end(); ++a, ++b) {
    if (a->empty()) break;  // a trailing separator
    if (*a != *b) return false;
  }
  return a == o.end() || a->empty();
}

}  // namespace harness
