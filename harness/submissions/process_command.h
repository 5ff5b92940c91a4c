// Resolving the command of a process submission to something that can run
// here: `python3`/`python` become an interpreter that can import NumPy and
// every module in `modules` (the manifest's arrays and imports: torch,
// triton, cupy) ($HARNESS_PYTHON alone when set; else python3 on PATH, else
// /usr/bin/python3); other programs are looked up relative to the
// submission's folder, then on PATH.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct ResolvedCommand {
  std::vector<std::string> argv;  // argv[0] an absolute path
  std::string note;               // which interpreter was chosen and why
};

// nullopt, with the reason in *why, when the command cannot run here.
std::optional<ResolvedCommand> resolve_process_command(const std::vector<std::string>& command,
                                                       const std::string& folder, std::string* why,
                                                       const std::vector<std::string>& modules = {});

}  // namespace harness
