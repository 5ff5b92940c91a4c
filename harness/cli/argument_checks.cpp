#include "harness/cli/argument_checks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "harness/core/error.h"

namespace harness {

uint64_t parse_seed(const std::string& text) {
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    throw UsageError(fmt::format("--seed '{}': expected a whole number from 0 to {}{}", text, UINT64_MAX,
                                 !text.empty() && text[0] == '-' ? " (a seed cannot be negative)" : ""));
  }
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    throw UsageError(fmt::format("--seed '{}': out of range, the largest seed is {}", text, UINT64_MAX));
  }
  return static_cast<uint64_t>(value);
}

double parse_timeout_seconds(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  const bool number = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
  if (!number || !std::isfinite(value) || value <= 0 || value > kMaxTimeoutSeconds) {
    throw UsageError(
        fmt::format("--timeout '{}': expected seconds above 0 and at most {:g} (one day)", text, kMaxTimeoutSeconds));
  }
  return value;
}

void check_output_path(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    throw UsageError(fmt::format("{} '{}': is a folder; name a file", option, path));
  }
  // write_file_atomically creates missing folders, so the nearest existing
  // one decides: it must be a folder we may create files in.
  fs::path folder = fs::absolute(fs::path(path), error).parent_path();
  while (!folder.empty() && !fs::exists(folder, error) && folder != folder.root_path()) folder = folder.parent_path();
  if (!fs::is_directory(folder, error)) {
    throw UsageError(fmt::format("{} '{}': cannot be written: '{}' is not a folder", option, path, folder.string()));
  }
  // Creating a file is the only test that holds for root and for read-only
  // file systems alike; the probe is removed at once.
  const fs::path probe = folder / fmt::format(".harness-write-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0) {
    throw UsageError(fmt::format("{} '{}': cannot be written: cannot create files in '{}': {}", option, path,
                                 folder.string(), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  namespace fs = std::filesystem;
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i].second.empty() || outputs[j].second.empty()) continue;
      std::error_code error;
      const fs::path a = fs::weakly_canonical(outputs[i].second, error);
      const fs::path b = fs::weakly_canonical(outputs[j].second, error);
      if (a == b) {
        throw UsageError(fmt::format("{} and {} both name '{}': each output needs its own file", outputs[i].first,
                                     outputs[j].first, outputs[i].second));
      }
    }
  }
}

}  // namespace harness
