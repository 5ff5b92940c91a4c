// harness gate results.json --baseline baseline.json [--max-slowdown PCT] [--no-timings]
//   [--max-score-drop POINTS] [--allow-incomplete] [-o gate.md]
// Exit 1 with a Markdown list of regressions, 0 when nothing regressed,
// 2 for unusable input.
#include <cstdio>
#include <memory>

#include "harness/cli/argument_checks.h"
#include "harness/cli/commands.h"
#include "harness/compare/derived_figures.h"
#include "harness/compare/gate.h"
#include "harness/core/files.h"
#include "harness/results/results_json.h"

namespace harness {

namespace {
struct GateArguments {
  std::string current;
  std::string baseline;
  std::string output;
  GateOptions options;
};

int gate(const GateArguments& args) {
  if (!args.output.empty()) check_output_path("-o", args.output);
  const RunResults current = load_results(args.current);
  const RunResults baseline = load_results(args.baseline);
  check_derived_figures(current, args.current);
  check_derived_figures(baseline, args.baseline);
  const GateReport report = gate_results(current, baseline, args.options);
  const std::string markdown = render_gate_markdown(report, args.options);
  std::fputs(markdown.c_str(), stdout);
  if (!args.output.empty()) write_file_atomically(args.output, markdown);
  return report.regressions.empty() ? 0 : 1;
}
}  // namespace

void add_gate_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<GateArguments>();
  CLI::App* cmd = app.add_subcommand("gate", "Fail (exit 1) when results regressed against a baseline");
  cmd->add_option("results", args->current, "Results to judge")->required();
  cmd->add_option("--baseline", args->baseline, "Baseline results")->required();
  cmd->add_option("--max-slowdown", args->options.max_slowdown_percent,
                  "Percent slower (and significant) that counts as a regression (default 10, for a dedicated machine; "
                  "a shared VM needs more than its A/A spread)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-score-drop", args->options.max_score_drop, "Points a score may drop (default 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag(
      "--no-timings", [args](int64_t) { args->options.compare_timings = false; },
      "Compare verdicts and scores only (for machines whose timings move with their neighbours, e.g. shared CI "
      "runners)");
  cmd->add_flag("--allow-incomplete", args->options.allow_incomplete,
                "Gate an interrupted run (complete: false) on what it holds instead of failing it");
  cmd->add_option("-o,--output", args->output, "Also write the Markdown here");
  cmd->callback([args, &command_line] { command_line.action = [args] { return gate(*args); }; });
}

}  // namespace harness
