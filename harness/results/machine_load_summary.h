// How busy the machine was over a run's timings (TimingResult::machine_load):
// for the report's environment and the summary `harness run` prints.
#pragma once

#include <cstddef>
#include <vector>

#include "harness/results/results.h"

namespace harness {

struct MachineLoadSummary {
  std::vector<double> other_cores;  // of every timing that recorded the machine's load, in result order
  size_t busy = 0;                  // of them, timings others held more than a quarter of the cores for
  const EntryResult* busiest_entry = nullptr;
  const CaseResult* busiest_case = nullptr;  // its timing's machine_load is the most others held
};

MachineLoadSummary summarize_machine_load(const RunResults& results);

}  // namespace harness
