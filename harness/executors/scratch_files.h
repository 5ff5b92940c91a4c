// The files a process submission shares with the harness in its scratch
// folder, which the process can write too.
#pragma once

#include <string>

namespace harness {

// Makes way for a file the harness writes or reads in the scratch folder. A
// file or a link there is removed; a folder (or a device, a FIFO) in its
// place is the process's doing: it is removed as well, and costs the case
// (UntrustedInputError).
void clear_scratch_path(const std::string& path);

}  // namespace harness
