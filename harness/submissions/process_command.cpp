#include "harness/submissions/process_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "harness/core/files.h"

namespace harness {

namespace {

bool is_executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');) {
    const std::string candidate = (std::filesystem::path(folder.empty() ? "." : folder) / name).string();
    if (is_executable(candidate)) return std::filesystem::absolute(candidate).string();
  }
  return "";
}

// Whether `python` imports every module; asked once per interpreter and
// list. The names were checked by the manifest (letters, digits, '_', '.').
bool imports_all(const std::string& python, const std::vector<std::string>& modules) {
  static std::map<std::pair<std::string, std::string>, bool> known;
  const std::string list = fmt::format("{}", fmt::join(modules, ", "));
  const auto key = std::make_pair(python, list);
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  const std::string command = fmt::format("'{}' -c 'import {}' >/dev/null 2>&1", python, list);
  return known[key] = std::system(command.c_str()) == 0;
}

std::optional<std::string> python_with(const std::vector<std::string>& modules, std::string* why) {
  const std::string list = fmt::format("{}", fmt::join(modules, ", "));
  if (const char* chosen = std::getenv("HARNESS_PYTHON"); chosen && *chosen) {
    if (!is_executable(chosen)) {
      *why = fmt::format("HARNESS_PYTHON={} is not an executable", chosen);
      return std::nullopt;
    }
    if (!imports_all(chosen, modules)) {
      *why = fmt::format("HARNESS_PYTHON={} cannot import {}", chosen, list);
      return std::nullopt;
    }
    return std::string(chosen);
  }
  std::vector<std::string> tried;
  for (const std::string& candidate : {find_on_path("python3"), std::string("/usr/bin/python3")}) {
    if (candidate.empty() || !is_executable(candidate)) continue;
    if (imports_all(candidate, modules)) return candidate;
    tried.push_back(candidate);
  }
  if (tried.empty()) {
    *why = "no python3 found (install python3 and python3-numpy; scripts/install-deps.sh does)";
    return std::nullopt;
  }
  *why = modules.size() == 1
             ? fmt::format("no python3 that can import numpy (tried {}; install python3-numpy, or set HARNESS_PYTHON)",
                           fmt::join(tried, ", "))
             : fmt::format("no python3 that can import {} (tried {}; set HARNESS_PYTHON to one that can)", list,
                           fmt::join(tried, ", "));
  return std::nullopt;
}

}  // namespace

std::optional<ResolvedCommand> resolve_process_command(const std::vector<std::string>& command,
                                                       const std::string& folder, std::string* why,
                                                       const std::vector<std::string>& modules) {
  if (command.empty()) {
    *why = "the manifest's \"command\" is empty";
    return std::nullopt;
  }
  ResolvedCommand resolved{command, ""};
  const std::string& program = command[0];
  if (program == "python3" || program == "python") {
    std::vector<std::string> needed{"numpy"};
    for (const std::string& module : modules) {
      if (std::find(needed.begin(), needed.end(), module) == needed.end()) needed.push_back(module);
    }
    const auto python = python_with(needed, why);
    if (!python) return std::nullopt;
    resolved.argv[0] = *python;
    resolved.note = "python: " + *python;
    return resolved;
  }
  if (program.find('/') != std::string::npos) {
    const std::string path =
        std::filesystem::path(program).is_absolute() ? program : (std::filesystem::path(folder) / program).string();
    if (!is_executable(path)) {
      *why = fmt::format("'{}' is not an executable file", path);
      return std::nullopt;
    }
    // A program the manifest names by path is its own, in its folder: one
    // elsewhere would have the sandbox open its installation for reading
    // (the folder two levels above it), which for the harness's worker is
    // the project and every submission's build.
    if (!path_holds(folder, path)) {
      *why = fmt::format(
          "'{}' lies outside the submission's folder: a process submission runs a program of its own "
          "folder, or one found on PATH by name",
          program);
      return std::nullopt;
    }
    resolved.argv[0] = path;
    return resolved;
  }
  const std::string found = find_on_path(program);
  if (found.empty()) {
    *why = fmt::format("'{}' is not on PATH", program);
    return std::nullopt;
  }
  resolved.argv[0] = found;
  return resolved;
}

}  // namespace harness
