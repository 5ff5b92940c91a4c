// The processes on this machine, as /proc lists them: each one's parent and
// process group, for the harness's sweeps of a worker's descendants and the
// memory witness of a process submission's group.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct ProcessEntry {
  pid_t pid = 0;
  pid_t parent = 0;
  pid_t group = 0;
};

// Every process /proc shows (those that end while it is read are left
// out); empty when /proc cannot be read.
std::vector<ProcessEntry> list_processes();

// The pids of every live process whose process group is `group`.
std::vector<pid_t> processes_in_group(pid_t group);

// A process's user + system time in seconds, all its threads and its reaped
// children's, from the text of its /proc/<pid>/stat; nullopt if malformed.
std::optional<double> parse_process_cpu_seconds(const std::string& stat, double ticks_per_second);
// The same, read now; nullopt when the process is gone.
std::optional<double> process_cpu_seconds(pid_t pid);

}  // namespace harness
