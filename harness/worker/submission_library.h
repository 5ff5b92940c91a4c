// A submission's shared library, loaded with dlopen in the worker process.
#pragma once

#include <string>

#include "harness/worker/abi_adapter.h"

namespace harness {

class SubmissionLibrary : public SymbolTable {
 public:
  explicit SubmissionLibrary(const std::string& path);  // throws with dlerror()
  ~SubmissionLibrary() override;
  SubmissionLibrary(const SubmissionLibrary&) = delete;
  SubmissionLibrary& operator=(const SubmissionLibrary&) = delete;

  void* find(const char* name) const override;

 private:
  void* handle_ = nullptr;
};

}  // namespace harness
