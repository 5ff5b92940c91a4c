// The seccomp part of the sandbox: a libseccomp filter compiled to BPF before
// fork (libseccomp allocates), installed in the child with one prctl; and a
// small hand-written filter on signals, made in the child because it compares
// against the child's own pid, which exists only after fork.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

namespace harness {

struct SeccompOptions {
  bool may_start_processes = false;  // false: clone only for threads, no fork/vfork
  // AddressSanitizer's leak checker ptraces its own process at exit: in such
  // builds ptrace fails with EPERM instead of killing the worker.
  bool ptrace_fails_softly = false;
  // Memory files (memfd_create) and System V shared memory: memory a
  // process can fill without mapping it, which no resident set shows (the
  // memory witness of a compiled CPU worker, cpu-hidden-xhat-memfd-file).
  bool may_make_memory_files = true;
};

// The BPF program of the main filter. Throws HarnessError with libseccomp's
// message when a rule cannot be added.
std::vector<sock_filter> build_seccomp_program(const SeccompOptions& options);

// In the child (async-signal-safe): installs the main program, then the
// signal filter for this pid. Returns nullptr or what failed.
const char* install_seccomp(const std::vector<sock_filter>& program);

// Whether the kernel takes seccomp filters at all (checked once, without
// installing one): an empty string, or why not.
const std::string& seccomp_unavailable_reason();

}  // namespace harness
