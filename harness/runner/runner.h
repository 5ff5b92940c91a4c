// The one evaluation loop: every planned (challenge, submission, device)
// entry, every case, through the same context and checks. A failure of any
// kind becomes that case's verdict; results are checkpointed after every
// case so an interrupted run keeps what it measured.
#pragma once

#include <functional>
#include <string>

#include "harness/challenge_api/run_settings.h"
#include "harness/results/results.h"
#include "harness/runner/run_plan.h"
#include "harness/runner/speed_of_light.h"

namespace harness {

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void entry_started(const PlannedEntry&) {}
  virtual void case_started(const PlannedEntry&, const CaseSpec&) {}
  virtual void case_finished(const PlannedEntry&, const CaseResult&) {}
  virtual void entry_finished(const EntryResult&) {}
};

// Runs the plan, appending one EntryResult per planned entry to
// results.entries and calling `checkpoint` after every case. Scores are not
// computed here (see scoring.h). A device's peak that `speed_of_light`
// raised during the run replaces it in results.devices, and every case on
// that device has its roofline figures computed again.
void execute_plan(const RunPlan& plan, const RunSettings& settings, RunResults& results, RunObserver& observer,
                  const std::function<void(const RunResults&)>& checkpoint, SpeedOfLight& speed_of_light);

// The command that re-runs one case of one entry with the same inputs.
std::string reproduce_command(const RunSettings& settings, const PlannedEntry& entry, const CaseSpec& spec);

}  // namespace harness
