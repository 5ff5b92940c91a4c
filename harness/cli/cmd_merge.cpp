// harness merge shard*.json -o all.json: shards of one run, from many
// machines, into one results file.
#include <cstdio>
#include <memory>

#include "harness/cli/argument_checks.h"
#include "harness/cli/commands.h"
#include "harness/compare/derived_figures.h"
#include "harness/compare/merge.h"
#include "harness/core/files.h"
#include "harness/results/results_json.h"

namespace harness {

namespace {
struct MergeArguments {
  std::vector<std::string> inputs;
  std::string output;
};

int merge(const MergeArguments& args) {
  check_output_path("-o", args.output);
  std::vector<NamedResults> inputs;
  for (const auto& path : args.inputs) {
    inputs.push_back({path, load_results(path)});
    check_derived_figures(inputs.back().results, path);
  }
  const RunResults merged = merge_results(inputs);
  write_file_atomically(args.output, to_json(merged).dump(1) + "\n");
  size_t cases = 0;
  for (const auto& e : merged.entries) cases += e.cases.size();
  std::fprintf(stderr, "harness: merged %zu files, %zu entries, %zu cases into %s\n", inputs.size(),
               merged.entries.size(), cases, args.output.c_str());
  return 0;
}
}  // namespace

void add_merge_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<MergeArguments>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge shards of a run into one results file");
  cmd->add_option("results", args->inputs, "Shard results files")->required();
  cmd->add_option("-o,--output", args->output, "Merged results file")->required();
  cmd->callback([args, &command_line] { command_line.action = [args] { return merge(*args); }; });
}

}  // namespace harness
