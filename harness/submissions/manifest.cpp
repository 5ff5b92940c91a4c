#include "harness/submissions/manifest.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "harness/core/error.h"
#include "harness/core/files.h"

namespace harness {

using nlohmann::json;

namespace {

const std::set<std::string> kKnownKeys{"name",   "challenge",    "device",  "sources",  "origin",     "description",
                                       "role",   "include_dirs", "defines", "flags",    "cuda_flags", "link_flags",
                                       "expect", "kind",         "command", "protocol", "arrays",     "imports"};
const std::set<std::string> kRoles{"submission", "reference", "baseline",       "peer",
                                   "mutant",     "exploit",   "float32-control"};

[[noreturn]] void invalid(const std::string& path, const std::string& problem) {
  throw UsageError(fmt::format("{}: {}", path, problem));
}

std::string required_string(const json& doc, const char* key, const std::string& path) {
  if (!doc.contains(key)) invalid(path, fmt::format("missing \"{}\"", key));
  if (!doc[key].is_string() || doc[key].get<std::string>().empty()) {
    invalid(path, fmt::format("\"{}\" must be a non-empty string", key));
  }
  return doc[key].get<std::string>();
}

std::string optional_string(const json& doc, const char* key, const std::string& path) {
  if (!doc.contains(key)) return "";
  if (!doc[key].is_string()) invalid(path, fmt::format("\"{}\" must be a string", key));
  return doc[key].get<std::string>();
}

std::vector<std::string> string_list(const json& doc, const char* key, const std::string& path) {
  if (!doc.contains(key)) return {};
  const json& value = doc[key];
  if (!value.is_array()) invalid(path, fmt::format("\"{}\" must be an array of strings", key));
  std::vector<std::string> list;
  for (const auto& item : value) {
    if (!item.is_string()) invalid(path, fmt::format("\"{}\" must be an array of strings", key));
    list.push_back(item.get<std::string>());
  }
  return list;
}

bool is_module_name(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.back() == '.' || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
}

// A process submission on a GPU computes in the harness's device memory
// (protocol 2) and names the arrays its functions get; the modules its
// interpreter must import decide which interpreter runs it.
void parse_process_device(const json& doc, const std::string& path, Manifest& m) {
  if (m.device == "cuda" && m.protocol != 2) {
    invalid(path,
            "a process submission on \"device\": \"cuda\" needs \"protocol\": 2 (its tensors are in the "
            "harness's device memory)");
  }
  m.arrays = m.device == "cuda" ? "torch" : "numpy";
  if (doc.contains("arrays")) m.arrays = required_string(doc, "arrays", path);
  const std::set<std::string> allowed =
      m.device == "cuda" ? std::set<std::string>{"cupy", "torch"} : std::set<std::string>{"numpy", "torch"};
  if (!allowed.count(m.arrays)) {
    invalid(path, fmt::format("\"arrays\": \"{}\" on \"device\": \"{}\" must be {}", m.arrays, m.device,
                              fmt::join(allowed, " or ")));
  }
  m.imports = string_list(doc, "imports", path);
  for (const std::string& name : m.imports) {
    if (!is_module_name(name)) invalid(path, fmt::format("\"imports\": \"{}\" is not a module name", name));
  }
}

}  // namespace

bool is_valid_submission_name(const std::string& name) {
  if (name.empty() || name.size() > 80) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

Manifest parse_manifest(const json& doc, const std::string& path) {
  if (!doc.is_object()) invalid(path, "must hold a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (!kKnownKeys.count(key)) {
      invalid(path, fmt::format("unknown field \"{}\" (known: {})", key, fmt::join(kKnownKeys, ", ")));
    }
  }
  Manifest m;
  m.path = path;
  m.folder = std::filesystem::path(path).parent_path().string();
  m.name = required_string(doc, "name", path);
  if (!is_valid_submission_name(m.name)) {
    invalid(path, fmt::format("name \"{}\": use letters, digits, '-', '_' and '.' only", m.name));
  }
  m.challenge = required_string(doc, "challenge", path);
  m.device = required_string(doc, "device", path);
  if (m.device != "cpu" && m.device != "cuda") {
    invalid(path, fmt::format("device \"{}\" must be \"cpu\" or \"cuda\"", m.device));
  }
  if (doc.contains("kind")) m.kind = required_string(doc, "kind", path);
  if (m.kind != "library" && m.kind != "process") {
    invalid(path, fmt::format("kind \"{}\" must be \"library\" or \"process\"", m.kind));
  }
  m.sources = string_list(doc, "sources", path);
  m.command = string_list(doc, "command", path);
  if (m.kind == "library" && m.sources.empty()) invalid(path, "\"sources\" lists no files");
  if (m.kind == "library" && !m.command.empty())
    invalid(path, "\"command\" is for process submissions (\"kind\": \"process\")");
  if (m.kind == "process" && m.command.empty())
    invalid(path, "a process submission needs \"command\": [program, arguments...]");
  if (doc.contains("protocol")) {
    const json& protocol = doc["protocol"];
    if (m.kind != "process") invalid(path, "\"protocol\" is for process submissions (\"kind\": \"process\")");
    if (!protocol.is_number_integer() || (protocol != 1 && protocol != 2)) {
      invalid(path, fmt::format("\"protocol\" is {}: 1 (tensors in .npy files) or 2 (tensors in memory the harness "
                                "owns), docs/PROCESS_PROTOCOL.md",
                                protocol.dump()));
    }
    m.protocol = protocol.get<int>();
  }
  if (m.kind == "process") {
    parse_process_device(doc, path, m);
  } else {
    for (const char* key : {"arrays", "imports"}) {
      if (doc.contains(key))
        invalid(path, fmt::format("\"{}\" is for process submissions (\"kind\": \"process\")", key));
    }
  }
  m.origin = optional_string(doc, "origin", path);
  m.description = optional_string(doc, "description", path);
  if (doc.contains("role")) m.role = required_string(doc, "role", path);
  if (!kRoles.count(m.role))
    invalid(path, fmt::format("role \"{}\" must be one of: {}", m.role, fmt::join(kRoles, ", ")));
  m.include_dirs = string_list(doc, "include_dirs", path);
  m.defines = string_list(doc, "defines", path);
  m.flags = string_list(doc, "flags", path);
  m.cuda_flags = string_list(doc, "cuda_flags", path);
  m.link_flags = string_list(doc, "link_flags", path);
  if (doc.contains("expect")) {
    const json& e = doc["expect"];
    if (!e.is_object() || !e.contains("suite") || !e.contains("verdict")) {
      invalid(path, "\"expect\" must be {\"suite\": ..., \"verdict\": ...}");
    }
    for (const auto& [key, value] : e.items()) {
      if (key != "suite" && key != "verdict" && key != "every_case" && key != "cases") {
        invalid(path, fmt::format("\"expect\": unknown field \"{}\" (known: suite, verdict, every_case, cases)", key));
      }
    }
    try {
      Expectation expect;
      expect.suite = suite_from_name(e["suite"].get<std::string>());
      expect.verdict = verdict_from_name(e["verdict"].get<std::string>());
      expect.every_case = e.value("every_case", false);
      expect.cases = string_list(e, "cases", path);
      m.expect = expect;
    } catch (const std::exception& error) {
      invalid(path, fmt::format("\"expect\": {}", error.what()));
    }
  }
  const bool judged_by_expectation = m.role == "mutant" || m.role == "exploit";
  if (judged_by_expectation && !m.expect) {
    invalid(path, fmt::format("{} needs \"expect\": the verdict the harness must give",
                              m.role == "exploit" ? "an exploit" : "a mutant"));
  }
  if (!judged_by_expectation && m.expect) invalid(path, "\"expect\" is for mutants and exploits only");
  return m;
}

Manifest load_manifest(const std::string& path) {
  json doc;
  try {
    doc = json::parse(read_text_file(path));
  } catch (const json::exception& e) {
    invalid(path, fmt::format("not valid JSON: {}", e.what()));
  }
  return parse_manifest(doc, path);
}

}  // namespace harness
