#include "harness/worker/submission_library.h"

#include <dlfcn.h>

namespace harness {

SubmissionLibrary::SubmissionLibrary(const std::string& path) {
  // RTLD_LOCAL: two submissions' symbols never meet; RTLD_NOW: a missing
  // dependency fails here, with its name, not in the middle of a case.
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* reason = ::dlerror();
    throw HarnessError(fmt::format("cannot load '{}': {}", path, reason ? reason : "unknown error"));
  }
}

SubmissionLibrary::~SubmissionLibrary() {
  // Deliberately not dlclose'd: a submission may have threads or CUDA
  // callbacks still referring to its code; the worker process is about to exit.
}

void* SubmissionLibrary::find(const char* name) const { return ::dlsym(handle_, name); }

}  // namespace harness
