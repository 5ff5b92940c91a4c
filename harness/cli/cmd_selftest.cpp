// harness selftest [CHALLENGE...] [--device ...] [-o results.json] [--md report.md]
// Runs every mutant, exploit and negative control, and the project's own
// references and baselines, on the suites run_plan.cpp picks for each; checks
// that each got the verdict it declares, and shows each tolerance beside the
// facts that justify it. Exit 1 naming any that did not get its verdict, or
// when a tolerance is unjustified.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "harness/cli/argument_checks.h"
#include "harness/cli/commands.h"
#include "harness/cli/run_session.h"
#include "harness/runner/selftest.h"
#include "harness/runner/tolerance_justification.h"

namespace harness {

namespace {

// Prints each tolerance beside its facts; returns how many are unjustified.
size_t print_tolerance_justifications(const RunResults& results) {
  const auto justifications = justify_tolerances(results);
  if (justifications.empty()) return 0;
  std::printf(
      "\nTolerances, each with the facts that justify it (a figure is the largest |got - float64| / allowed error:\n"
      "1 is the tolerance itself):\n");
  size_t unjustified = 0;
  for (const auto& j : justifications) {
    std::printf("%s %s (%s)%s\n", j.challenge.c_str(), j.tolerance.c_str(), j.bound.c_str(),
                j.declared ? (", measured by " + j.metric).c_str() : "");
    for (const auto& f : j.facts) {
      const std::string who = f.submission + " (" + f.device + ")";
      std::printf("  %-10s %-42s %s\n", f.kind.c_str(), who.c_str(), f.observed.c_str());
    }
    if (j.failed()) {
      ++unjustified;
      std::printf("  NOT JUSTIFIED: %s\n", j.declared
                                               ? "a fact above is measured against it"
                                               : "its challenge.json names nothing that justifies it (justified_by)");
    } else if (!j.missing.empty()) {
      std::string kinds;
      for (const auto& k : j.missing) kinds += (kinds.empty() ? "" : ", ") + k;
      std::printf("  not shown in full by this run: no %s in the selection\n", kinds.c_str());
    } else {
      std::printf("  justified: our reference and sound code pass it, a realistic mutant fails it\n");
    }
  }
  return unjustified;
}

struct SelftestArguments {
  std::vector<std::string> challenges;
  std::string device = "all";
  std::string seed;
  std::string timeout = "10";
  std::string output = "selftest.json";
  std::string markdown;
  bool verbose = false;
};
}  // namespace

void add_selftest_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<SelftestArguments>();
  CLI::App* cmd =
      app.add_subcommand("selftest", "Check that every mutant and negative control gets its declared verdict");
  cmd->add_option("challenges", args->challenges, "Challenges (default: all)");
  cmd->add_option("--device", args->device, "cpu, cuda or all available (default)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  CLI::Option* seed = cmd->add_option("--seed", args->seed, "Seed of the inputs (default: fresh, printed)");
  cmd->add_option("--timeout", args->timeout, "Seconds one call may take, at most one day (default 10)");
  cmd->add_option("-o,--output", args->output, "Results file (default selftest.json)");
  cmd->add_option("--md", args->markdown, "Also write the Markdown report here");
  cmd->add_flag("-v,--verbose", args->verbose, "Print every case");
  cmd->callback([args, seed, &command_line] {
    command_line.action = [args, seed, &command_line] {
      SessionOptions options;
      options.selection.challenges = args->challenges;
      options.selection.device = args->device;
      options.selection.only_mutants = true;
      options.selection.suites = {Suite::correctness, Suite::edge, Suite::stability};
      options.seed_given = seed->count() > 0;
      options.settings.seed = options.seed_given ? parse_seed(args->seed) : fresh_seed();
      options.settings.call_timeout_s = parse_timeout_seconds(args->timeout);
      options.settings.harness_command = command_line.argv[0];
      options.json_path = args->output;
      options.markdown_path = args->markdown;
      options.verbosity = args->verbose ? Verbosity::verbose : Verbosity::quiet;
      options.command_line = shell_join(command_line.argc, command_line.argv);
      const RunResults results = run_session(options);

      const auto findings = evaluate_selftest(results);
      size_t failed = 0;
      std::printf("%-19s %-40s %-8s %-10s %-34s %s\n", "challenge", "submission", "device", "role", "must get", "got");
      for (const auto& f : findings) {
        std::printf("%-19s %-40s %-8s %-10s %-34s %s%s\n", f.challenge.c_str(), f.submission.c_str(), f.device.c_str(),
                    f.role.c_str(), f.expected.c_str(), f.observed.c_str(), f.ok ? "" : "   <-- NOT AS DECLARED");
        if (!f.ok) ++failed;
      }
      if (findings.empty()) {
        std::printf("selftest: nothing to check for this selection\n");
        return 1;
      }
      const size_t unjustified = print_tolerance_justifications(results);
      if (failed) {
        std::printf("\nselftest FAILED: %zu of %zu did not get their declared verdict:", failed, findings.size());
        for (const auto& f : findings) {
          if (!f.ok) std::printf(" %s/%s(%s)", f.challenge.c_str(), f.submission.c_str(), f.device.c_str());
        }
        std::printf("\n");
      }
      if (unjustified)
        std::printf("\nselftest FAILED: %zu tolerance(s) not justified by what this run measured\n", unjustified);
      if (failed || unjustified) return 1;
      std::printf("\nselftest passed: all %zu got their declared verdicts, no tolerance is unjustified\n",
                  findings.size());
      return 0;
    };
  });
}

}  // namespace harness
