#include "harness/core/processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace harness {

namespace {

// /proc/<pid>/stat is "pid (comm) state ppid pgrp ...", where comm may
// itself hold spaces and parentheses: the fields are counted from the last
// ')'. nullopt when the process is gone. Read with plain system calls: a
// listing reads every process's file, at every memory reading of a process
// group.
std::optional<ProcessEntry> read_entry(const char* pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[1024];
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return std::nullopt;
  text[got] = '\0';
  const char* close = std::strrchr(text, ')');
  if (close == nullptr) return std::nullopt;
  char state = 0;
  long parent = 0, group = 0;
  if (std::sscanf(close + 1, " %c %ld %ld", &state, &parent, &group) != 3) return std::nullopt;
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

}  // namespace harness
