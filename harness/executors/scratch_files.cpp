#include "harness/executors/scratch_files.h"

#include <fmt/format.h>

#include <filesystem>

#include "harness/core/error.h"

namespace harness {

void clear_scratch_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (status.type() == fs::file_type::not_found) return;
  if (error) throw UntrustedInputError(fmt::format("cannot look at scratch file {}: {}", path, error.message()));
  const bool plain = status.type() == fs::file_type::regular || status.type() == fs::file_type::symlink;
  if (plain) {
    if (fs::remove(path, error)) return;
    throw UntrustedInputError(fmt::format("cannot remove scratch file {} ({}): the process changed the scratch folder",
                                          path, error.message()));
  }
  fs::remove_all(path, error);
  throw UntrustedInputError(fmt::format("the process put a {} where the harness's scratch file {} goes{}",
                                        status.type() == fs::file_type::directory ? "folder" : "special file", path,
                                        error ? " (and it cannot be removed: " + error.message() + ")" : " (removed)"));
}

}  // namespace harness
