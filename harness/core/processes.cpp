#include "harness/core/processes.h"

#include <dirent.h>

#include <cctype>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace harness {

namespace {

// /proc/<pid>/stat is "pid (comm) state ppid pgrp ...", where comm may
// itself hold spaces and parentheses: the fields are counted from the last
// ')'. nullopt when the process is gone.
std::optional<ProcessEntry> read_entry(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string state;
  long parent = 0, group = 0;
  if (!(fields >> state >> parent >> group)) return std::nullopt;
  return ProcessEntry{static_cast<pid_t>(std::stol(pid)), static_cast<pid_t>(parent), static_cast<pid_t>(group)};
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
