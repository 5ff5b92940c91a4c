// harness report results.json... [-o report.md]: the head-to-head Markdown
// from stored results; several files merge side by side.
#include <cstdio>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/core/files.h"
#include "harness/report/markdown_report.h"
#include "harness/results/results_json.h"
#include "harness/scoring/scoring.h"

namespace harness {

namespace {
struct ReportArguments {
  std::vector<std::string> inputs;
  std::string output;
};

int report(const ReportArguments& args) {
  RunResults merged;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    RunResults r = load_results(args.inputs[i]);
    if (i == 0) {
      merged.run = r.run;
    } else {
      merged.run.command_line += "\n" + r.run.command_line;
      merged.run.complete = merged.run.complete && r.run.complete;
    }
    for (auto& d : r.devices) {
      if (!merged.device(d.id)) merged.devices.push_back(std::move(d));
    }
    for (auto& e : r.entries) merged.entries.push_back(std::move(e));
  }
  // Scores again: a baseline stored in one file scores the speedups of another.
  score_results(merged);
  const std::string markdown = render_markdown(merged);
  if (args.output.empty()) {
    std::fputs(markdown.c_str(), stdout);
  } else {
    write_file_atomically(args.output, markdown);
    std::fprintf(stderr, "harness: wrote %s\n", args.output.c_str());
  }
  return 0;
}
}  // namespace

void add_report_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<ReportArguments>();
  CLI::App* cmd = app.add_subcommand("report", "Render the Markdown report from stored results");
  cmd->add_option("results", args->inputs, "Results files")->required();
  cmd->add_option("-o,--output", args->output, "Write the report here (default: stdout)");
  cmd->callback([args, &command_line] { command_line.action = [args] { return report(*args); }; });
}

}  // namespace harness
