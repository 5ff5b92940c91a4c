// What else the machine did while the harness timed a case: the CPU time
// every process but the harness and the submission's own spent meanwhile,
// from /proc/stat less the two's own counts. A median measured while other
// work held the cores is slower than the code; the results say so beside
// the timings. Disclosed, never judged: other processes' work is not the
// submission's doing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

// Every CPU's time in seconds, from /proc/stat's first line: busy (user,
// nice, system, irq, softirq, steal) and all of it (with idle and iowait).
struct MachineCpuTimes {
  double busy_s = 0;
  double all_s = 0;
};
std::optional<MachineCpuTimes> parse_machine_cpu_times(const std::string& proc_stat, double ticks_per_second);

// A window over which the machine's load is read: opened as the timing
// starts, closed as it ends. `ours` lists the submission's processes as they
// are at each end (a worker may start within the window); the harness's own
// is always counted as ours.
class LoadWindow {
 public:
  using Processes = std::function<std::vector<pid_t>()>;
  explicit LoadWindow(Processes ours);
  // Nullopt where /proc cannot tell (not Linux, or unreadable).
  std::optional<TimingResult::MachineLoad> close() const;

 private:
  std::map<pid_t, double> ours_seconds() const;
  Processes ours_;
  std::map<pid_t, double> start_ours_;
  std::optional<MachineCpuTimes> start_;
  int64_t start_ns_ = 0;
};

}  // namespace harness
