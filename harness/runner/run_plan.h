// Which (challenge, submission, device) entries and which of their cases a
// run executes, from the command line's selection.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "harness/device/device_info.h"
#include "harness/executors/control_executor.h"
#include "harness/results/results.h"
#include "harness/submissions/catalog.h"

namespace harness {

struct RunSelection {
  std::vector<std::string> challenges;   // empty: all
  std::vector<std::string> submissions;  // empty: all (mutants only with with_mutants)
  std::string device = "all";            // "cpu" | "cuda" | "all"
  std::vector<Suite> suites;             // empty: all
  std::vector<std::string> case_ids;     // empty: all
  bool quick = false;                    // only the cases marked quick
  bool with_mutants = false;             // add mutants and negative controls
  bool only_mutants = false;             // selftest: every unranked role, references and baselines
  // With no device of a kind, plan its submissions anyway on the missing
  // device: the runner records build_failed, or the cases as not run.
  bool judge_without_device = false;
  std::optional<std::pair<int, int>> shard;  // (index from 1, count)
};

struct PlannedEntry {
  const Challenge* challenge = nullptr;
  SubmissionInfo submission;
  BuildInfo build;
  std::string library;                       // compiled submissions
  std::vector<std::string> process_command;  // process submissions
  int process_protocol = 1;                  // their protocol version
  std::string process_arrays = "numpy";      // and what their functions get
  std::string folder;                        // the submission's folder
  std::vector<std::string> include_dirs;     // the manifest's, absolute: a process submission may read them too
  std::optional<ControlKind> control;        // built-in negative controls
  const DeviceInfo* device = nullptr;
  std::vector<CaseSpec> cases;
};

struct RunPlan {
  std::vector<PlannedEntry> entries;
  std::vector<std::string> notes;  // what was left out and why (no CUDA device, ...)
  size_t case_count() const;
};

// Throws UsageError when the selection names something that does not
// exist (a challenge, submission, case or device), when a shard of a
// non-empty selection gets no case, or when a selected submission was never
// built (no build.json: a build of the main job's targets alone).
RunPlan make_plan(const RunSelection& selection, const Catalog& catalog, const std::vector<DeviceInfo>& devices);

// "2/8" -> (2, 8); throws UsageError unless 1 <= I <= N.
std::pair<int, int> parse_shard(const std::string& text);

}  // namespace harness
