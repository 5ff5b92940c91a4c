#include "harness/witness/machine_load.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/core/processes.h"

namespace harness {

namespace {

std::optional<MachineCpuTimes> machine_now() {
  try {
    const long ticks = ::sysconf(_SC_CLK_TCK);
    return parse_machine_cpu_times(read_text_file("/proc/stat"), ticks > 0 ? static_cast<double>(ticks) : 100.0);
  } catch (const UsageError&) {  // no /proc: no reading
    return std::nullopt;
  }
}

}  // namespace

std::optional<MachineCpuTimes> parse_machine_cpu_times(const std::string& proc_stat, double ticks) {
  std::istringstream in(proc_stat);
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal (guest time is inside user)
  double field[8];
  for (double& f : field) {
    if (!(in >> f)) return std::nullopt;
  }
  MachineCpuTimes t;
  t.busy_s = (field[0] + field[1] + field[2] + field[5] + field[6] + field[7]) / ticks;
  t.all_s = t.busy_s + (field[3] + field[4]) / ticks;
  return t;
}

LoadWindow::LoadWindow(Processes ours) : ours_(std::move(ours)) {
  start_ours_ = ours_seconds();
  start_ = machine_now();
  start_ns_ = monotonic_ns();
}

std::map<pid_t, double> LoadWindow::ours_seconds() const {
  std::vector<pid_t> pids = ours_ ? ours_() : std::vector<pid_t>{};
  pids.push_back(::getpid());
  std::map<pid_t, double> seconds;
  for (const pid_t pid : pids) {
    if (const auto cpu = process_cpu_seconds(pid)) seconds[pid] = *cpu;
  }
  return seconds;
}

std::optional<TimingResult::MachineLoad> LoadWindow::close() const {
  const std::optional<MachineCpuTimes> end = machine_now();
  const std::map<pid_t, double> end_ours = ours_seconds();
  const double wall_s = static_cast<double>(monotonic_ns() - start_ns_) / 1e9;
  if (!start_ || !end || wall_s <= 0 || end->all_s <= start_->all_s) return std::nullopt;
  // A process started within the window spent all its time in it; one gone
  // by its end is not counted as ours (its time shows as others').
  double ours_s = 0;
  for (const auto& [pid, seconds] : end_ours) {
    const auto before = start_ours_.find(pid);
    ours_s += std::max(0.0, seconds - (before == start_ours_.end() ? 0.0 : before->second));
  }
  TimingResult::MachineLoad load;
  load.seconds = wall_s;
  load.cores = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  // CPU seconds per second of the window: cores busy, on average.
  load.ours_cores = ours_s / wall_s;
  load.other_cores = std::max(0.0, (end->busy_s - start_->busy_s) - ours_s) / wall_s;
  return load;
}

}  // namespace harness
