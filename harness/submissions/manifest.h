// submission.json: what a submission is and how to build it. Parsed with
// strict checks so that a typo is an error with the file and field named,
// not a silently ignored option.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

struct Manifest {
  std::string path;    // of submission.json
  std::string folder;  // containing it
  std::string name;
  std::string challenge;
  std::string device;  // "cpu" | "cuda"
  std::string origin;
  std::string description;
  std::string role =
      "submission";  // "submission", "reference", "baseline", "peer", "mutant", "exploit", "float32-control"
  std::string kind = "library";      // "library" (compiled) or "process" (docs/PROCESS_PROTOCOL.md)
  std::vector<std::string> command;  // process: the program and its arguments
  int protocol = 1;                  // process: 1 (.npy files) or 2 (memory the harness owns)
  std::string arrays = "numpy";      // process: what its functions get: "numpy" or "torch"; on "cuda" "torch" or "cupy"
  std::vector<std::string> imports;  // process: modules its interpreter must import (besides numpy and `arrays`)
  std::vector<std::string> sources;
  std::vector<std::string> include_dirs;
  std::vector<std::string> defines;
  std::vector<std::string> flags;
  std::vector<std::string> cuda_flags;
  std::vector<std::string> link_flags;
  std::optional<Expectation> expect;  // mutants and exploits: the verdict the harness must give
};

// Throws UsageError naming the file and the problem.
Manifest parse_manifest(const nlohmann::json& document, const std::string& path);
Manifest load_manifest(const std::string& path);

bool is_valid_submission_name(const std::string& name);

}  // namespace harness
