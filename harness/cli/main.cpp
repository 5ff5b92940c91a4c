// harness: judges implementations of ML kernels by measurement.
// Exit codes: 0 success; 1 the run found failures (run, selftest) or a
// regression (gate); 2 unusable input (a bad option, a missing or malformed
// file, results that cannot be compared); 3 the harness itself failed.
#include <malloc.h>
#include <signal.h>

#include <cstdio>

#include "harness/cli/commands.h"
#include "harness/core/error.h"

int main(int argc, char** argv) {
  // A worker that dies while we write to it must be an error, not a SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  // The checks of the largest cases allocate and free hundreds of megabytes
  // per input set. Served by mmap, every such buffer arrives as fresh pages
  // the kernel must zero (a quarter of a large case's time, measured); kept
  // in the heap and never trimmed, the next set reuses them.
  ::mallopt(M_MMAP_MAX, 0);
  ::mallopt(M_TRIM_THRESHOLD, -1);
  CLI::App app{"harness: builds, checks, times and scores implementations of ML kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", HARNESS_VERSION);
  harness::CommandLine command_line{argc, argv, nullptr};
  harness::add_list_command(app, command_line);
  harness::add_run_command(app, command_line);
  harness::add_selftest_command(app, command_line);
  harness::add_peak_command(app, command_line);
  harness::add_report_command(app, command_line);
  harness::add_gate_command(app, command_line);
  harness::add_merge_command(app, command_line);
  harness::add_ops_command(app, command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return command_line.action ? command_line.action() : 2;
  } catch (const harness::UsageError& e) {
    std::fprintf(stderr, "harness: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness: internal error: %s\n", e.what());
    return 3;
  }
}
