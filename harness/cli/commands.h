// The subcommands of `harness`. Each adds itself to the CLI app and, when
// chosen, stores its action; main() runs it and turns its result or its
// exception into the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace harness {

struct CommandLine {
  int argc = 0;
  char** argv = nullptr;
  std::function<int()> action;  // set by the chosen subcommand
};

void add_list_command(CLI::App& app, CommandLine& command_line);
void add_run_command(CLI::App& app, CommandLine& command_line);
void add_selftest_command(CLI::App& app, CommandLine& command_line);
void add_peak_command(CLI::App& app, CommandLine& command_line);
void add_report_command(CLI::App& app, CommandLine& command_line);
void add_gate_command(CLI::App& app, CommandLine& command_line);
void add_merge_command(CLI::App& app, CommandLine& command_line);
void add_ops_command(CLI::App& app, CommandLine& command_line);

}  // namespace harness
