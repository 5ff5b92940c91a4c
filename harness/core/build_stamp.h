// Which source the running harness was compiled from: recorded in every
// results file (run.git_commit) so that a figure can be traced to the code
// that produced it.
#pragma once

#include <string>

namespace harness {

// The commit of the project's checkout at build time, with "-dirty" when
// its tracked files had uncommitted changes, "unknown" outside a git
// checkout. Stamped at every build (cmake/build_stamp.cmake), so a build
// carried to another machine, or run after the checkout moved on, still
// names the commit of its own binaries.
std::string built_from_commit();

}  // namespace harness
