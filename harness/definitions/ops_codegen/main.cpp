// harness-ops-codegen: from a challenge's declared ops (challenge.json,
// "abi" and "ops") the worker's source for that challenge: a static_assert
// per C function of the header against its declaration, so that a header
// that disagrees fails the build naming both, and, for a challenge without
// an adapter of its own, the registration of DeclaredAbiAdapter.
//   harness-ops-codegen <challenge.json> <challenge> <output.cpp> [--own-adapter]
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "harness/core/error.h"
#include "harness/definitions/op_declaration.h"

namespace {

using harness::ChallengeOps;
using harness::OpDeclaration;

std::string check(const std::string& function, const std::string& type, const std::string& header,
                  const std::string& file, const std::string& declared) {
  return fmt::format(
      "static_assert(std::is_same<decltype(&{0}), {1}>::value,\n"
      "              \"{0} in {2} disagrees with its declaration in {3}: {4}\");\n",
      function, type, header, file, declared);
}

std::string generate(const ChallengeOps& ops, const nlohmann::json& declaration, bool own_adapter) {
  const std::string file = fmt::format("challenges/{}/challenge.json", ops.challenge);
  std::ostringstream out;
  out << fmt::format("// Generated from {} by harness-ops-codegen; edit that file, not this one.\n", file);
  out << "#include <type_traits>\n\n";
  out << fmt::format("#include \"{}\"\n", ops.header);
  if (!own_adapter) out << "#include \"harness/worker/declared_adapter.h\"\n";
  out << "\n";
  out << check(ops.version_function, "int32_t (*)(void)", ops.header, file,
               fmt::format("int32_t {}(void)", ops.version_function));
  out << check(ops.last_error_function, "const char* (*)(void)", ops.header, file,
               fmt::format("const char* {}(void)", ops.last_error_function));
  for (const OpDeclaration& op : ops.ops) {
    out << check(op.function, op.c_function_type(), ops.header, file, op.c_signature());
  }
  if (own_adapter) return out.str();

  out << "\nnamespace {\n\n";
  out << fmt::format("const char kDeclaration[] = R\"harness_json({})harness_json\";\n\n", declaration.dump());
  out << "std::unique_ptr<harness::AbiAdapter> make_declared_adapter() {\n";
  out << fmt::format(
      "  auto adapter = std::make_unique<harness::DeclaredAbiAdapter>(\n"
      "      harness::parse_challenge_ops(\"{}\", nlohmann::json::parse(kDeclaration)), {});\n",
      ops.challenge, ops.version_macro);
  for (const OpDeclaration& op : ops.ops) {
    out << fmt::format("  adapter->add_op(\"{}\", harness::declared_op<decltype(&{})>());\n", op.name, op.function);
  }
  out << "  return adapter;\n}\n\n";
  out << fmt::format("const bool registered = harness::register_abi_adapter(\"{}\", make_declared_adapter);\n\n",
                     ops.challenge);
  out << "}  // namespace\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5 || (argc == 5 && std::string(argv[4]) != "--own-adapter")) {
    std::cerr << "usage: harness-ops-codegen <challenge.json> <challenge> <output.cpp> [--own-adapter]\n";
    return 2;
  }
  const std::string config_path = argv[1];
  const std::string challenge = argv[2];
  const bool own_adapter = argc == 5;
  try {
    std::ifstream in(config_path);
    HARNESS_CHECK(in, "cannot read {}", config_path);
    const nlohmann::json config = nlohmann::json::parse(in);
    const ChallengeOps ops = harness::parse_challenge_ops(challenge, config);
    HARNESS_CHECK(own_adapter || ops.bindable_without_adapter(),
                  "{}: an op takes a handle, which only an adapter of the challenge's own "
                  "(challenges/{}/worker/) can supply",
                  config_path, challenge);
    const nlohmann::json declaration{{"abi", config.at("abi")}, {"ops", config.at("ops")}};
    const std::string source = generate(ops, declaration, own_adapter);
    std::ifstream existing(argv[3]);
    std::stringstream current;
    current << existing.rdbuf();
    if (current.str() == source) return 0;  // unchanged: nothing to recompile
    std::ofstream out(argv[3]);
    out << source;
    HARNESS_CHECK(out.good(), "cannot write {}", argv[3]);
  } catch (const std::exception& e) {
    std::cerr << "harness-ops-codegen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
