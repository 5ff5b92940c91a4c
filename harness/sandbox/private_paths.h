// The harness's own folders (the run's logs, every process submission's
// tensor files and staged inputs) stay unreadable to every child: a path a
// child may read must neither hold one of them nor lie inside one. A
// process submission's manifest chooses some of its readable paths (its
// include folders, its command's installation), so any of them may be "/".
#pragma once

#include <set>
#include <string>
#include <vector>

namespace harness {

// Throws UntrustedInputError naming the first readable path that holds or
// lies inside a private path (both compared after resolving symbolic links).
void refuse_reads_of_private_paths(const std::set<std::string>& readable,
                                   const std::vector<std::string>& private_paths);

}  // namespace harness
