// harness list [CHALLENGE...] [--cases]: challenges, submissions with their
// build status, and devices.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include "harness/challenge_api/challenge.h"
#include "harness/cli/commands.h"
#include "harness/device/device_info.h"
#include "harness/executors/control_executor.h"
#include "harness/submissions/catalog.h"

namespace harness {

namespace {

struct ListArguments {
  std::vector<std::string> challenges;
  bool cases = false;
};

// Free text from a manifest or a build log on one line of the table: a line
// break or a control character (an escape sequence) would break the table or
// take over the terminal.
std::string one_line(const std::string& text, size_t max_length = 160) {
  std::string out;
  for (char c : text) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? ' ' : c;
  if (out.size() <= max_length) return out;
  size_t end = max_length;
  while (end > 0 && (static_cast<unsigned char>(out[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 sequence
  return out.substr(0, end) + "...";
}

// The compiler's first errors under a failed build's row, and where the
// whole log is: enough to start fixing without opening the build folder.
void print_build_errors(const BuildInfo& build) {
  constexpr size_t kLinesShown = 6;
  std::istringstream excerpt(build.log_excerpt);
  size_t shown = 0;
  for (std::string line; std::getline(excerpt, line) && shown < kLinesShown; ++shown) {
    std::printf("      | %s\n", one_line(line).c_str());
  }
  if (!build.log_path.empty()) std::printf("      full log: %s\n", one_line(build.log_path, 400).c_str());
}

int list(const ListArguments& args) {
  std::vector<const Challenge*> challenges;
  for (const auto& name : args.challenges) challenges.push_back(&find_challenge(name));
  if (challenges.empty()) {
    for (const auto& c : all_challenges()) challenges.push_back(c.get());
  }

  std::printf("Challenges:\n");
  for (const Challenge* c : challenges) {
    std::map<Suite, size_t> per_suite;
    size_t quick = 0;
    for (const auto& spec : c->cases()) {
      ++per_suite[spec.suite];
      quick += spec.quick ? 1 : 0;
    }
    std::string suites;
    for (const auto& [suite, n] : per_suite)
      suites += fmt::format("{}{} {}", suites.empty() ? "" : ", ", n, suite_name(suite));
    std::printf("  %-20s ABI v%d  %s (%zu in --quick)  %s\n", c->name().c_str(), c->abi_version(), suites.c_str(),
                quick, c->config().title.c_str());
    if (args.cases) {
      for (const auto& spec : c->cases()) {
        std::printf("      %-48s %s%s\n", spec.id.c_str(), spec.description.c_str(), spec.quick ? "  [quick]" : "");
      }
    }
  }

  const Catalog catalog = Catalog::load(Catalog::default_index_path());
  std::printf("\nSubmissions:\n  %-20s %-40s %-6s %-10s %-12s %s\n", "challenge", "name", "device", "role", "build",
              "origin / problem");
  for (const Challenge* c : challenges) {
    for (const auto& r : catalog.records()) {
      if (r.challenge != c->name()) continue;
      const SubmissionInfo info = r.info();
      const std::string detail = one_line(r.build.status == "ok" ? info.origin : r.build.reason);
      const std::string role = info.kind == "process" ? info.role + "*" : info.role;
      std::printf("  %-20s %-40s %-6s %-10s %-12s %s\n", c->name().c_str(), one_line(info.name, 80).c_str(),
                  one_line(info.device, 6).c_str(), one_line(role, 10).c_str(), one_line(r.build.status, 12).c_str(),
                  detail.c_str());
      if (r.build.status == "failed") print_build_errors(r.build);
    }
    for (ControlKind kind : all_controls()) {
      std::printf("  %-20s %-40s %-6s %-10s %-12s %s\n", c->name().c_str(), control_name(kind).c_str(), "cpu",
                  "control", "built-in", control_description(kind).c_str());
    }
  }
  std::vector<std::string> orphans;
  for (const auto& r : catalog.records()) {
    bool known = false;
    for (const auto& c : all_challenges()) known = known || c->name() == r.challenge;
    if (!known)
      orphans.push_back(
          fmt::format("{} ({}): {}", r.name, r.manifest_path,
                      r.manifest_error.empty() ? "unknown challenge '" + r.challenge + "'" : r.manifest_error));
  }
  for (const auto& o : orphans) std::printf("  not usable: %s\n", one_line(o, 400).c_str());
  std::printf("  (* a process submission: docs/PROCESS_PROTOCOL.md)\n");

  std::printf("\nDevices:\n");
  for (const auto& d : discover_devices()) {
    if (d.available) {
      std::printf("  %-8s %s (%d %s)\n", d.id.c_str(), d.name.c_str(), d.compute_units,
                  d.kind == "cpu" ? "cores" : "SMs");
    } else {
      std::printf("  %-8s not available: %s\n", d.id.c_str(), d.unavailable_reason.c_str());
    }
  }
  return 0;
}

}  // namespace

void add_list_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<ListArguments>();
  CLI::App* cmd = app.add_subcommand("list", "List challenges, submissions (with build status) and devices");
  cmd->add_option("challenges", args->challenges, "Only these challenges");
  cmd->add_flag("--cases", args->cases, "Also list every case id");
  cmd->callback([args, &command_line] { command_line.action = [args] { return list(*args); }; });
}

}  // namespace harness
