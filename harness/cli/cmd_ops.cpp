// harness ops [CHALLENGE...] [--json]: each challenge's declared ops, the
// table a process submission implements (docs/PROCESS_PROTOCOL.md), or the
// declarations themselves as JSON.
#include <cstdio>
#include <memory>

#include "harness/challenge_api/challenge.h"
#include "harness/cli/commands.h"
#include "harness/definitions/op_table.h"

namespace harness {

namespace {

struct OpsArguments {
  std::vector<std::string> challenges;
  bool json = false;
};

int ops(const OpsArguments& args) {
  std::vector<const ChallengeOps*> selected;
  if (args.challenges.empty()) {
    for (const auto& challenge : all_challenges()) selected.push_back(&challenge->config().ops);
  } else {
    for (const std::string& name : args.challenges) selected.push_back(&find_challenge(name).config().ops);
  }
  if (!args.json) {
    std::fputs(op_table_markdown(selected).c_str(), stdout);
    return 0;
  }
  nlohmann::json out = nlohmann::json::object();
  for (const ChallengeOps* o : selected) {
    const nlohmann::json& raw = find_challenge(o->challenge).config().raw;
    out[o->challenge] = {{"abi", raw.at("abi")}, {"ops", raw.at("ops")}};
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace

void add_ops_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<OpsArguments>();
  CLI::App* cmd = app.add_subcommand("ops",
                                     "Print each challenge's declared ops: the table a process submission "
                                     "implements, or the declarations as JSON");
  cmd->add_option("challenges", args->challenges, "Challenges (default: all)");
  cmd->add_flag("--json", args->json, "The declarations (challenge.json's \"abi\" and \"ops\") as JSON");
  cmd->callback([args, &command_line] { command_line.action = [args] { return ops(*args); }; });
}

}  // namespace harness
