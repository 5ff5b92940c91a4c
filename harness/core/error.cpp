#include "harness/core/error.h"

#include <cerrno>
#include <cstring>

namespace harness {

namespace {
const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}
}  // namespace

void throw_error(const char* file, int line, const char* expression, const std::string& message) {
  if (expression) {
    throw HarnessError(fmt::format("{} ({}:{}: check '{}' failed)", message, base_name(file), line, expression));
  }
  throw HarnessError(fmt::format("{} ({}:{})", message, base_name(file), line));
}

void throw_errno(const char* file, int line, const char* expression, const std::string& message) {
  const int saved = errno;
  throw HarnessError(
      fmt::format("{}: {} ({}:{}: '{}')", message, std::strerror(saved), base_name(file), line, expression));
}

}  // namespace harness
