#include "harness/witness/machine_load.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "harness/core/clock.h"

namespace harness {

namespace {

double ticks_per_second() {
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<MachineCpuTimes> machine_now() {
  return parse_machine_cpu_times(read_text("/proc/stat"), ticks_per_second());
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

std::optional<double> parse_process_cpu_seconds(const std::string& pid_stat, double ticks) {
  // "pid (comm) state ...": comm may hold spaces and parentheses, so fields
  // are counted from the last ')'. utime, stime, cutime and cstime are
  // fields 14 to 17, the 12th to 15th after it.
  const size_t close = pid_stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(pid_stat.substr(close + 1));
  std::string skipped;
  for (int i = 0; i < 11; ++i) {
    if (!(in >> skipped)) return std::nullopt;
  }
  double utime = 0, stime = 0, cutime = 0, cstime = 0;
  if (!(in >> utime >> stime >> cutime >> cstime)) return std::nullopt;
  return (utime + stime + cutime + cstime) / ticks;
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
    const auto cpu = parse_process_cpu_seconds(read_text("/proc/" + std::to_string(pid) + "/stat"), ticks_per_second());
    if (cpu) seconds[pid] = *cpu;
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
