#include "harness/sandbox/private_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "harness/core/error.h"

namespace harness {

namespace {

namespace fs = std::filesystem;

// The path as the kernel will resolve it: absolute, symbolic links followed
// as far as the path exists.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal();
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : canonical;
}

// Whether `outer` is `inner` or one of its ancestors, by whole components.
bool holds(const fs::path& outer, const fs::path& inner) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end() && i != inner.end(); ++o, ++i) {
    if (o->empty()) break;  // a trailing separator
    if (*o != *i) return false;
  }
  return o == outer.end() || o->empty();
}

}  // namespace

void refuse_reads_of_private_paths(const std::set<std::string>& readable, const std::vector<std::string>& private_paths) {
  for (const std::string& private_path : private_paths) {
    const fs::path kept = resolved(private_path);
    for (const std::string& path : readable) {
      const fs::path granted = resolved(path);
      if (holds(granted, kept)) {
        throw UntrustedInputError(fmt::format(
            "it would be allowed to read '{}', which holds the harness's own folder '{}' (the run's logs and tensor "
            "files): a folder it reads must stay clear of the run's",
            path, kept.string()));
      }
      if (holds(kept, granted)) {
        throw UntrustedInputError(fmt::format(
            "it would be allowed to read '{}', inside the harness's own folder '{}' (the run's logs and tensor files)",
            path, kept.string()));
      }
    }
  }
}

}  // namespace harness
