// harness run [CHALLENGE...] [-s SUBMISSION...] [--device cpu|cuda|all]
//   [--suite ...] [--case ID] [--seed N] [--quick] [--timeout S]
//   [--shard I/N] [-o results.json] [--md report.md] [--junit junit.xml]
//   [--with-mutants] [--measure-peak] [--memory-limit SIZE] [--sanitize[=memcheck|racecheck]]
//   [--quiet|--verbose]
#include <memory>

#include "harness/cli/argument_checks.h"
#include "harness/cli/commands.h"
#include "harness/cli/run_session.h"
#include "harness/sandbox/sandbox.h"
#include "harness/sanitize/compute_sanitizer.h"

namespace harness {

namespace {

// A sanitized run checks values, not speed: timings under compute-sanitizer
// are its own. Every suite but perf unless some were named; perf named is
// refused.
std::vector<Suite> sanitized_suites(const std::vector<Suite>& named) {
  if (named.empty()) return {Suite::correctness, Suite::edge, Suite::stability};
  for (const Suite s : named) {
    if (s == Suite::perf) {
      throw UsageError(
          "--sanitize with --suite perf: a sanitized run times nothing (compute-sanitizer slows every "
          "kernel); run the perf suite without it");
    }
  }
  return named;
}

struct RunArguments {
  std::vector<std::string> challenges;
  std::vector<std::string> submissions;
  std::string device = "all";
  std::vector<std::string> suites;
  std::vector<std::string> cases;
  std::string seed;  // parsed by parse_seed: CLI11 would wrap -1 to 2^64-1
  bool quick = false;
  std::string timeout = "30";  // parsed by parse_timeout_seconds: nan and 1e308 never fire
  std::string shard;
  std::string output = "results.json";
  std::string markdown;
  std::string junit;
  bool with_mutants = false;
  bool quiet = false;
  bool verbose = false;
  bool measure_peak = false;
  std::string memory_limit = "8G";
  std::string sanitize;  // the tool; "" with the option given alone: memcheck
};

}  // namespace

void add_run_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<RunArguments>();
  CLI::App* run = app.add_subcommand("run", "Run challenges on submissions and devices; write results and reports");
  run->add_option("challenges", args->challenges, "Challenges to run (default: all)");
  run->add_option("-s,--submission", args->submissions, "Submissions to run, by name (default: all but mutants)")
      ->delimiter(',');
  run->add_option("--device", args->device, "cpu, cuda or all available (default)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  run->add_option("--suite", args->suites, "Suites: correctness,edge,stability,perf (default: all)")->delimiter(',');
  run->add_option("--case", args->cases, "Only these case ids (see `harness list --cases`)")->delimiter(',');
  CLI::Option* seed =
      run->add_option("--seed", args->seed, "Seed of the inputs, 0 to 2^64-1 (default: fresh, printed)");
  run->add_flag("--quick", args->quick, "A representative subset of cases and shorter timing");
  run->add_option("--timeout", args->timeout,
                  "Seconds one call may take before it is a timeout, at most one day (default 30)");
  run->add_option("--shard", args->shard, "Run shard I of N (e.g. 2/8) of the case list");
  run->add_option("-o,--output", args->output, "Results file, rewritten after every case (default results.json)");
  run->add_option("--md", args->markdown, "Also write the Markdown report here");
  run->add_option("--junit", args->junit, "Also write JUnit XML here");
  run->add_flag("--with-mutants", args->with_mutants, "Also run the mutants and negative controls (never ranked)");
  run->add_flag("--measure-peak", args->measure_peak,
                "Measure each device's peak bandwidth again (and store it) instead of using this host's cached one");
  run->add_option("--memory-limit", args->memory_limit,
                  "Address space of each CPU worker and process submission, e.g. 8G, or none (default 8G)");
  CLI::Option* sanitize =
      run->add_option("--sanitize", args->sanitize,
                      "Run CUDA workers under compute-sanitizer: memcheck (alone, the default) or racecheck; its "
                      "findings are verdicts. No perf cases")
          ->expected(0, 1);
  run->add_flag("-q,--quiet", args->quiet, "Print only errors");
  run->add_flag("-v,--verbose", args->verbose, "Print every case");
  run->callback([args, seed, sanitize, &command_line] {
    command_line.action = [args, seed, sanitize, &command_line] {
      SessionOptions options;
      options.selection.challenges = args->challenges;
      options.selection.submissions = args->submissions;
      options.selection.device = args->device;
      for (const auto& s : args->suites) options.selection.suites.push_back(suite_from_name(s));
      options.selection.case_ids = args->cases;
      options.selection.quick = args->quick;
      options.selection.with_mutants = args->with_mutants;
      options.selection.judge_without_device = true;
      if (!args->shard.empty()) options.selection.shard = parse_shard(args->shard);
      options.seed_given = seed->count() > 0;
      options.measure_peak = args->measure_peak;
      options.settings.seed = options.seed_given ? parse_seed(args->seed) : fresh_seed();
      options.settings.quick = args->quick;
      options.settings.call_timeout_s = parse_timeout_seconds(args->timeout);
      if (args->quick) {
        options.settings.timing.warmup_ms = 5;
        options.settings.timing.min_samples = 5;
        options.settings.timing.min_ms = 20;
        options.settings.timing.max_ms = 300;
      }
      if (sanitize->count() > 0) {
        options.settings.sanitizer = resolve_sanitizer(args->sanitize.empty() ? "memcheck" : args->sanitize);
        options.selection.suites = sanitized_suites(options.selection.suites);
      }
      options.settings.harness_command = command_line.argv[0];
      options.json_path = args->output;
      options.markdown_path = args->markdown;
      options.junit_path = args->junit;
      options.verbosity = args->quiet ? Verbosity::quiet : args->verbose ? Verbosity::verbose : Verbosity::normal;
      options.command_line = shell_join(command_line.argc, command_line.argv);
      SandboxSettings sandbox;
      sandbox.memory_limit_bytes = parse_memory_size(args->memory_limit);
      configure_sandbox(sandbox);
      return run_exit_code(run_session(options));
    };
  });
}

}  // namespace harness
