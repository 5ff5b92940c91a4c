// Small filesystem helpers whose failures carry the path and the reason.
#pragma once

#include <string>

namespace harness {

std::string read_text_file(const std::string& path);
// Writes to path.tmp.<pid>, then renames: a reader never sees half a file, and a
// run killed mid-write leaves the previous version intact.
void write_file_atomically(const std::string& path, const std::string& content);
bool file_exists(const std::string& path);
// Folder of the running executable (where the build put harness, the worker
// and submission_index.json).
std::string executable_dir();

// Whether `outer` is `inner` or a folder above it, by whole components,
// both resolved as the kernel would open them (absolute, symbolic links
// followed as far as they exist). False when either cannot be resolved.
bool path_holds(const std::string& outer, const std::string& inner);

// A folder for large files rewritten often (process submissions' tensors):
// /dev/shm when it is a memory file system with at least `room` bytes free
// and TMPDIR is not set, otherwise the temp directory: inputs rewritten on a
// disk between timed calls leave write-back running under the next calls.
std::string memory_backed_temp_directory(unsigned long long room);

}  // namespace harness
