// The environment's line on how busy the machine was while the run timed
// its cases (TimingResult::machine_load, harness/witness/machine_load.h).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "harness/core/format.h"
#include "harness/core/stats.h"
#include "harness/report/markdown_sections.h"

namespace harness::markdown {

std::string machine_load_line(const RunResults& results) {
  std::vector<double> others;
  size_t busy = 0;
  const EntryResult* busiest_entry = nullptr;
  const TimingResult::MachineLoad* busiest = nullptr;
  const CaseResult* busiest_case = nullptr;
  for (const EntryResult& e : results.entries) {
    for (const CaseResult& c : e.cases) {
      if (!c.timing || !c.timing->machine_load) continue;
      const TimingResult::MachineLoad& load = *c.timing->machine_load;
      others.push_back(load.other_cores);
      busy += load.busy();
      if (!busiest || load.other_cores > busiest->other_cores) {
        busiest_entry = &e;
        busiest = &load;
        busiest_case = &c;
      }
    }
  }
  if (others.empty()) return "";
  std::string line = fmt::format(
      "  - other processes' load while cases were timed: {:.2f} cores busy in the median timing of {}, at most "
      "{:.2f} of {} ({} / {}, {})",
      median(others), others.size(), busiest->other_cores, busiest->cores, markdown_code(busiest_entry->challenge),
      markdown_code(busiest_entry->submission.name), markdown_code(busiest_case->id));
  if (busy > 0) {
    line += fmt::format(
        "; **{} of {} timings shared the machine with other work holding more than a quarter of its cores** "
        "(marked \"machine busy\" in the performance tables): their medians are slower than the code",
        busy, others.size());
  }
  return line + "\n";
}

}  // namespace harness::markdown
