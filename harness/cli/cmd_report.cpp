// harness report results.json... [-o report.md] [--reviewer-scores F] [--peer F]:
// the head-to-head Markdown from stored results; several files merge side by
// side; a peer's timings (PyTorch eager) are set beside ours.
#include <cstdio>
#include <memory>

#include "harness/cli/argument_checks.h"
#include "harness/cli/commands.h"
#include "harness/compare/derived_figures.h"
#include "harness/core/files.h"
#include "harness/report/markdown_report.h"
#include "harness/results/results_json.h"

namespace harness {

namespace {
struct ReportArguments {
  std::vector<std::string> inputs;
  std::string output;
  std::string reviewer_scores;
  std::vector<std::string> peers;
};

int report(const ReportArguments& args) {
  if (!args.output.empty()) check_output_path("-o", args.output);
  std::vector<NamedResults> runs;
  for (const auto& path : args.inputs) {
    runs.push_back({path, load_results(path)});
    check_derived_figures(runs.back().results, path);
  }
  // Combined and scored again: a baseline stored in one file scores the
  // speedups of another; devices of different machines stay apart.
  ReportInput input = combine_for_report(runs);
  if (!args.reviewer_scores.empty()) input.reviews = load_reviewer_scores(args.reviewer_scores);
  for (const auto& path : args.peers) input.peers.push_back(load_peer_timings(path));
  const std::string markdown = render_markdown(input);
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
  cmd->add_option("--reviewer-scores", args->reviewer_scores,
                  "JSON of reviewer-assigned scores, shown in labelled rows, never in the overall");
  cmd->add_option(
      "--peer", args->peers,
      "Timings of a peer on the same perf cases (scripts/gpu/pytorch_eager.py), shown beside ours; repeatable");
  cmd->callback([args, &command_line] { command_line.action = [args] { return report(*args); }; });
}

}  // namespace harness
