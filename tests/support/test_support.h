// Helpers shared by the tests: running the CLI, running plans through the
// library, temporary folders.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/challenge_api/run_settings.h"
#include "harness/executors/worker_executor.h"
#include "harness/results/results.h"
#include "harness/runner/run_plan.h"
#include "harness/submissions/catalog.h"

namespace harness::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the built `harness` binary with `arguments` (shell words), with
// `environment` (shell assignments, e.g. "A=1 B=2") in front.
CommandResult run_cli(const std::string& arguments, const std::string& environment = "");
// Runs any shell command line.
CommandResult run_shell(const std::string& command);
// Removes the folders a harness run of process `pid` keeps (harness-run-<pid>
// in the temp directory and in /dev/shm): a run killed on purpose leaves
// them behind.
void remove_run_folders(int pid);

// The environment (for run_cli) under which the harness finds the test
// fixtures' catalogue instead of the project's.
inline const std::string kFixtureIndexEnvironment = std::string("HARNESS_SUBMISSION_INDEX=") + HARNESS_FIXTURE_INDEX;

// A fresh folder under the system temp folder, removed by the destructor.
class TempFolder {
 public:
  TempFolder();
  ~TempFolder();
  std::string path(const std::string& name) const;

 private:
  std::string root_;
};

// Sets an environment variable of this process for a scope (the workers it
// starts inherit it), and restores what it was (or its absence) after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> before_;
};

// The catalogue of the test fixtures (tests/fixtures).
const Catalog& fixture_catalog();
// The project's own catalogue (submissions/).
const Catalog& project_catalog();

// A compiled CPU worker for `library`, a submission of `challenge`, its
// output in `log_path`.
inline WorkerTarget cpu_worker_target(const std::string& challenge, const std::string& library,
                                      const std::string& log_path) {
  WorkerTarget target;
  target.challenge = challenge;
  target.library = library;
  target.device_kind = "cpu";
  target.worker_executable = std::string(HARNESS_BUILD_DIR) + "/harness-worker";
  target.log_path = log_path;
  return target;
}

// The cpu device with this host's cached peak, as a CLI run gets it
// (measured quickly and stored only when none is cached): measuring it in
// every test process cost a second of both cores each.
const std::vector<DeviceInfo>& cpu_devices();

// Plans `selection` against `catalog` on the cpu and runs it; scores too.
RunResults run_selection(const RunSelection& selection, const Catalog& catalog, RunSettings settings = {});
// The same for the softmax_topk cases `case_ids` of one submission.
RunResults run_softmax_cases(const std::string& submission, const std::vector<std::string>& case_ids,
                             const Catalog& catalog, RunSettings settings = {});

// A built submission's entry of `challenge` on `device`, holding case `c` alone.
EntryResult entry_with_case(const std::string& challenge, const std::string& submission, const std::string& device,
                            CaseResult c);
// Every section of `markdown` under `heading` (one per challenge and
// device), from the heading to the end of its table, one after another.
std::string markdown_sections(const std::string& markdown, const std::string& heading);

// Every entry of `results` for `submission`; fails the test if none.
const EntryResult& entry_of(const RunResults& results, const std::string& submission);
const CaseResult& case_of(const EntryResult& entry, const std::string& case_id);

}  // namespace harness::testing
