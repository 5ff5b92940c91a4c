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
  const EntryResult* busiest_entry = nullptr;
  const CaseResult* busiest = nullptr;
  for (const EntryResult& e : results.entries) {
    for (const CaseResult& c : e.cases) {
      if (!c.timing || !c.timing->machine_load) continue;
      others.push_back(c.timing->machine_load->other_cores);
      if (!busiest || c.timing->machine_load->other_cores > busiest->timing->machine_load->other_cores) {
        busiest_entry = &e;
        busiest = &c;
      }
    }
  }
  if (others.empty()) return "";
  const int cores = std::max(1, results.run.host.logical_cores);
  const auto under_load = std::count_if(others.begin(), others.end(), [&](double o) {
    return TimingResult::MachineLoad{o, 0, 0}.busy(cores);
  });
  std::string line = fmt::format(
      "  - other processes' load while cases were timed: {:.2f} cores busy in the median timing of {}, at most "
      "{:.2f} of {} ({} / {}, {})",
      median(others), others.size(), busiest->timing->machine_load->other_cores, cores,
      markdown_code(busiest_entry->challenge), markdown_code(busiest_entry->submission.name),
      markdown_code(busiest->id));
  if (under_load > 0) {
    line += fmt::format(
        "; **{} of {} timings shared the machine with other work holding more than a quarter of its cores**: "
        "their medians are slower than the code",
        under_load, others.size());
  }
  return line + "\n";
}

}  // namespace harness::markdown
