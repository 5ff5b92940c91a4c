// The environment's line on how busy the machine was while the run timed
// its cases (TimingResult::machine_load, harness/witness/machine_load.h).
#include <fmt/format.h>

#include "harness/core/format.h"
#include "harness/core/stats.h"
#include "harness/report/markdown_sections.h"
#include "harness/results/machine_load_summary.h"

namespace harness::markdown {

std::string machine_load_line(const RunResults& results) {
  const MachineLoadSummary s = summarize_machine_load(results);
  if (s.other_cores.empty()) return "";
  const TimingResult::MachineLoad& most = *s.busiest_case->timing->machine_load;
  std::string line = fmt::format(
      "  - other processes' load while cases were timed: {:.2f} cores busy in the median timing of {}, at most "
      "{:.2f} of {} ({} / {}, {})",
      median(s.other_cores), s.other_cores.size(), most.other_cores, most.cores,
      markdown_code(s.busiest_entry->challenge), markdown_code(s.busiest_entry->submission.name),
      markdown_code(s.busiest_case->id));
  if (s.busy > 0) {
    line += fmt::format(
        "; **{} of {} timings shared the machine with other work holding more than a quarter of its cores** "
        "(marked \"machine busy\" in the performance tables): their medians are slower than the code",
        s.busy, s.other_cores.size());
  }
  return line + "\n";
}

}  // namespace harness::markdown
