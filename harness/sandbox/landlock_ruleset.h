// The Landlock part of the sandbox, through raw system calls (glibc has no
// wrappers). The ruleset is built in the parent before fork; the child only
// calls landlock_restrict_self.
#pragma once

#include <set>
#include <string>

#include "harness/sandbox/sandbox.h"

namespace harness {

// The kernel's Landlock ABI version; 0 when it has none (or it is disabled),
// with the reason in *why.
int landlock_abi(std::string* why = nullptr);

// Every path a child may read and execute: the system folders, the
// request's readable paths, its programs with the installation each lies
// in, and an interpreter's search paths from the harness's environment.
std::set<std::string> readable_paths(const SandboxRequest& request);

// A ruleset fd (close-on-exec) allowing: read and execute of the system
// folders and the request's readable paths; read, write and create in its
// writable folder; read and write of /dev/null and the like and the GPU's
// device files; with ABI >= 4 no TCP bind or connect; with ABI >= 6 no
// signals to and no abstract Unix sockets of processes outside the sandbox.
int make_landlock_ruleset(const SandboxRequest& request, int abi);

// In the child, before landlock_restrict (async-signal-safe): lets it write
// the files of its own /proc/<pid>, where the CUDA driver names its threads
// (cuInit fails without). The folder's fd is left open to the child so that
// the rule's inode stays; never /proc as a whole (/proc/sysrq-trigger).
// Returns the failing call, or nullptr.
const char* landlock_allow_own_process_files(int ruleset_fd, int abi);

// In the child (async-signal-safe); requires no_new_privs.
const char* landlock_restrict(int ruleset_fd);

}  // namespace harness
