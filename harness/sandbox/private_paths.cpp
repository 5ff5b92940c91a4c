#include "harness/sandbox/private_paths.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/files.h"

namespace harness {

void refuse_reads_of_private_paths(const std::set<std::string>& readable,
                                   const std::vector<std::string>& private_paths) {
  for (const std::string& private_path : private_paths) {
    for (const std::string& path : readable) {
      if (path_holds(path, private_path)) {
        throw UntrustedInputError(fmt::format(
            "it would be allowed to read '{}', which holds the harness's own folder '{}' (the run's logs and tensor "
            "files, or the project's build): a folder it reads must stay clear of them",
            path, private_path));
      }
      if (path_holds(private_path, path)) {
        throw UntrustedInputError(fmt::format(
            "it would be allowed to read '{}', inside the harness's own folder '{}' (the run's logs and tensor files, "
            "or the project's build)",
            path, private_path));
      }
    }
  }
}

}  // namespace harness
