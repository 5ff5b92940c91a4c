// Every submission the build knows: submission_index.json (written at
// configure time) lists each manifest and its build folder, where
// build_submission.cmake left build.json and build.log.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/submissions/manifest.h"

namespace harness {

// What a submission without a build.json needs.
inline constexpr const char* kHowToBuildEverything =
    "scripts/run-all.sh builds only what `harness run` judges (the target main-job); build everything with "
    "`cmake --build` on the build folder, or `bash scripts/test.sh`";

struct SubmissionRecord {
  std::string manifest_path;
  std::string root;                  // the folder searched for it (submissions/, or one of HARNESS_EXTRA_SUBMISSIONS)
  std::optional<Manifest> manifest;  // absent when the manifest is invalid
  std::string manifest_error;
  BuildInfo build;
  std::string library;                       // the shared library, when built
  std::vector<std::string> process_command;  // a process submission's resolved command
  std::string build_log_path;

  // Name and challenge as best known (from the raw file if the manifest is invalid).
  std::string name;
  std::string challenge;
  SubmissionInfo info() const;
};

class Catalog {
 public:
  // Reads the index; a missing index is a UsageError that says how to build.
  static Catalog load(const std::string& index_path);
  // $HARNESS_SUBMISSION_INDEX when set (another build's submissions), else
  // <folder of this executable>/submission_index.json, else the build tree's.
  static std::string default_index_path();

  const std::vector<SubmissionRecord>& records() const { return records_; }

 private:
  std::vector<SubmissionRecord> records_;
};

// The compiler's first errors from a build log: lines mentioning "error"
// with the line after each, at most max_lines (the log's tail if none).
std::string build_log_excerpt(const std::string& log, size_t max_lines = 20);

// One line for a failed build: its reason, the compiler's first error and
// where the full log is, e.g. "compiling shim.cu failed (exit 2): shim.cu:3:
// error: ... (full log: build/.../build.log)".
std::string build_failure_summary(const BuildInfo& build);

}  // namespace harness
