#include "harness/results/machine_load_summary.h"

namespace harness {

MachineLoadSummary summarize_machine_load(const RunResults& results) {
  MachineLoadSummary s;
  for (const EntryResult& e : results.entries) {
    for (const CaseResult& c : e.cases) {
      if (!c.timing || !c.timing->machine_load) continue;
      const TimingResult::MachineLoad& load = *c.timing->machine_load;
      s.other_cores.push_back(load.other_cores);
      s.busy += load.busy();
      if (!s.busiest_case || load.other_cores > s.busiest_case->timing->machine_load->other_cores) {
        s.busiest_entry = &e;
        s.busiest_case = &c;
      }
    }
  }
  return s;
}

}  // namespace harness
