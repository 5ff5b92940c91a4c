#include "harness/core/processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace harness {

namespace {

// /proc/<pid>/stat is "pid (comm) state ppid pgrp ...", where comm may
// itself hold spaces and parentheses: the fields are counted from the last
// ')'. Its text, or empty when the process is gone. Read with plain system
// calls: a listing reads every process's file, at every memory reading of a
// process group.
std::string read_stat(const char* pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char text[1024];
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  return got > 0 ? std::string(text, static_cast<size_t>(got)) : std::string();
}

// The fields after the process's name, or nullptr.
const char* fields_after_name(const std::string& stat) {
  const size_t close = stat.rfind(')');
  return close == std::string::npos ? nullptr : stat.c_str() + close + 1;
}

std::optional<ProcessEntry> read_entry(const char* pid) {
  const std::string stat = read_stat(pid);
  const char* fields = fields_after_name(stat);
  if (fields == nullptr) return std::nullopt;
  char state = 0;
  long parent = 0, group = 0;
  if (std::sscanf(fields, " %c %ld %ld", &state, &parent, &group) != 3) return std::nullopt;
  return ProcessEntry{static_cast<pid_t>(std::atol(pid)), static_cast<pid_t>(parent), static_cast<pid_t>(group)};
}

}  // namespace

std::vector<ProcessEntry> list_processes() {
  std::vector<ProcessEntry> found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (const dirent* entry = ::readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    if (const auto process = read_entry(entry->d_name)) found.push_back(*process);
  }
  ::closedir(proc);
  return found;
}

std::vector<pid_t> processes_in_group(pid_t group) {
  std::vector<pid_t> members;
  for (const ProcessEntry& p : list_processes()) {
    if (p.group == group) members.push_back(p.pid);
  }
  return members;
}

std::optional<double> parse_process_cpu_seconds(const std::string& stat, double ticks_per_second) {
  // utime, stime, cutime and cstime: fields 14 to 17, the 12th to 15th after the name.
  const char* fields = fields_after_name(stat);
  if (fields == nullptr) return std::nullopt;
  double utime = 0, stime = 0, cutime = 0, cstime = 0;
  if (std::sscanf(fields, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lf %lf %lf %lf", &utime, &stime, &cutime,
                  &cstime) != 4) {
    return std::nullopt;
  }
  return (utime + stime + cutime + cstime) / ticks_per_second;
}

std::optional<double> process_cpu_seconds(pid_t pid) {
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return parse_process_cpu_seconds(read_stat(std::to_string(pid).c_str()),
                                   ticks > 0 ? static_cast<double>(ticks) : 100.0);
}

}  // namespace harness
