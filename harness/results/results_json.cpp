#include "harness/results/results_json.h"

#include <set>
#include <tuple>

#include "harness/core/error.h"
#include "harness/core/files.h"

namespace harness {

using nlohmann::json;

bool is_unranked_role(const std::string& role) {
  return role == "mutant" || role == "exploit" || role == "control" || role == "float32-control";
}

bool is_peer_role(const std::string& role) { return role == "peer"; }

const CaseResult* EntryResult::find_case(const std::string& id) const {
  for (const auto& c : cases) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

const DeviceInfo* RunResults::device(const std::string& id) const {
  for (const auto& d : devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

namespace {

json to_json(const HostInfo& h) {
  return json{{"hostname", h.hostname},         {"os", h.os},
              {"cpu_model", h.cpu_model},       {"logical_cores", h.logical_cores},
              {"memory_bytes", h.memory_bytes}, {"last_level_cache_bytes", h.last_level_cache_bytes}};
}

HostInfo host_from_json(const json& j) {
  HostInfo h;
  h.hostname = j.value("hostname", "");
  h.os = j.value("os", "");
  h.cpu_model = j.value("cpu_model", "");
  h.logical_cores = j.value("logical_cores", 0);
  h.memory_bytes = j.value("memory_bytes", uint64_t{0});
  h.last_level_cache_bytes = j.value("last_level_cache_bytes", uint64_t{0});
  return h;
}

json to_json(const Expectation& e) {
  json j{{"suite", suite_name(e.suite)}, {"verdict", verdict_name(e.verdict)}, {"every_case", e.every_case}};
  if (!e.cases.empty()) j["cases"] = e.cases;
  return j;
}

Expectation expectation_from_json(const json& j) {
  Expectation e;
  e.suite = suite_from_name(j.at("suite").get<std::string>());
  e.verdict = verdict_from_name(j.at("verdict").get<std::string>());
  e.every_case = j.value("every_case", false);
  e.cases = j.value("cases", std::vector<std::string>{});
  return e;
}

json to_json(const SubmissionInfo& s) {
  return json{{"name", s.name},
              {"challenge", s.challenge},
              {"device", s.device},
              {"role", s.role},
              {"kind", s.kind},
              {"origin", s.origin},
              {"description", s.description},
              {"manifest", s.manifest_path},
              {"expect", s.expect ? to_json(*s.expect) : json(nullptr)}};
}

SubmissionInfo submission_from_json(const json& j) {
  SubmissionInfo s;
  s.name = j.at("name").get<std::string>();
  s.challenge = j.at("challenge").get<std::string>();
  s.device = j.at("device").get<std::string>();
  s.role = j.value("role", "submission");
  s.kind = j.value("kind", "library");
  s.origin = j.value("origin", "");
  s.description = j.value("description", "");
  s.manifest_path = j.value("manifest", "");
  if (j.contains("expect") && !j["expect"].is_null()) s.expect = expectation_from_json(j["expect"]);
  return s;
}

}  // namespace

json to_json(const DeviceInfo& d) {
  return json{{"id", d.id},
              {"kind", d.kind},
              {"index", d.index},
              {"name", d.name},
              {"available", d.available},
              {"unavailable_reason", d.unavailable_reason},
              {"compute_units", d.compute_units},
              {"memory_bytes", d.memory_bytes},
              {"cache_bytes", d.cache_bytes},
              {"compute_capability", d.compute_capability},
              {"driver_version", d.driver_version},
              {"runtime_version", d.runtime_version},
              {"peak", d.peak ? to_json(*d.peak) : json(nullptr)}};
}

DeviceInfo device_from_json(const json& j) {
  DeviceInfo d;
  d.id = j.at("id").get<std::string>();
  d.kind = j.at("kind").get<std::string>();
  d.index = j.value("index", 0);
  d.name = j.value("name", "");
  d.available = j.value("available", true);
  d.unavailable_reason = j.value("unavailable_reason", "");
  d.compute_units = j.value("compute_units", 0);
  d.memory_bytes = j.value("memory_bytes", uint64_t{0});
  d.cache_bytes = j.value("cache_bytes", uint64_t{0});
  d.compute_capability = j.value("compute_capability", "");
  d.driver_version = j.value("driver_version", "");
  d.runtime_version = j.value("runtime_version", "");
  if (j.contains("peak") && !j["peak"].is_null()) d.peak = peak_from_json(j["peak"]);
  return d;
}

json to_json(const RunResults& r) {
  json entries = json::array();
  for (const auto& e : r.entries) {
    json cases = json::array();
    for (const auto& c : e.cases) cases.push_back(to_json(c));
    entries.push_back(json{{"challenge", e.challenge},
                           {"submission", to_json(e.submission)},
                           {"device", e.device},
                           {"build", json{{"status", e.build.status},
                                          {"reason", e.build.reason},
                                          {"log_excerpt", e.build.log_excerpt},
                                          {"log", e.build.log_path}}},
                           {"cases", cases},
                           {"scores", e.scores ? to_json(*e.scores) : json(nullptr)}});
  }
  json devices = json::array();
  for (const auto& d : r.devices) devices.push_back(to_json(d));
  json run{{"harness_version", r.run.harness_version},
           {"started", r.run.started},
           {"finished", r.run.finished},
           {"git_commit", r.run.git_commit},
           {"command_line", r.run.command_line},
           {"seed", r.run.seed},
           {"host", to_json(r.run.host)},
           {"options", r.run.options},
           {"complete", r.run.complete}};
  if (!r.run.sandbox.empty()) run["sandbox"] = r.run.sandbox;
  return json{{"schema", kResultsSchema}, {"run", run}, {"devices", devices}, {"results", entries}};
}

namespace {

// One entry per (challenge, submission, device) and one result per case id
// within it: a file edited by hand or concatenated from two runs would
// otherwise count a case twice in scores, reports and gates.
void check_unique_entries_and_cases(const RunResults& r) {
  std::set<std::tuple<std::string, std::string, std::string>> entries;
  for (const EntryResult& e : r.entries) {
    if (!entries.emplace(e.challenge, e.submission.name, e.device).second) {
      throw UsageError(
          fmt::format("the entry of {} / {} on {} appears more than once", e.challenge, e.submission.name, e.device));
    }
    std::set<std::string> ids;
    for (const CaseResult& c : e.cases) {
      if (!ids.insert(c.id).second) {
        throw UsageError(fmt::format("case {} appears more than once in the entry of {} / {} on {}", c.id, e.challenge,
                                     e.submission.name, e.device));
      }
    }
  }
}

}  // namespace

RunResults results_from_json(const json& document, const std::string& origin) {
  if (!document.is_object() || !document.contains("schema")) {
    throw UsageError(fmt::format("{}: not a results file (no \"schema\" field)", origin));
  }
  const std::string schema = document["schema"].is_string() ? document["schema"].get<std::string>() : "?";
  if (schema != kResultsSchema) {
    throw UsageError(fmt::format("{}: schema '{}' is not '{}'", origin, schema, kResultsSchema));
  }
  try {
    RunResults r;
    const json& run = document.at("run");
    r.run.harness_version = run.value("harness_version", "");
    r.run.started = run.value("started", "");
    r.run.finished = run.value("finished", "");
    r.run.git_commit = run.value("git_commit", "");
    r.run.command_line = run.value("command_line", "");
    r.run.seed = run.at("seed").get<uint64_t>();
    r.run.host = host_from_json(run.value("host", json::object()));
    r.run.options = run.value("options", json::object());
    r.run.sandbox = run.value("sandbox", json::object());
    r.run.complete = run.value("complete", false);
    for (const auto& d : document.at("devices")) r.devices.push_back(device_from_json(d));
    for (const auto& e : document.at("results")) {
      EntryResult entry;
      entry.challenge = e.at("challenge").get<std::string>();
      entry.submission = submission_from_json(e.at("submission"));
      entry.device = e.at("device").get<std::string>();
      const json& build = e.at("build");
      entry.build.status = build.value("status", "ok");
      entry.build.reason = build.value("reason", "");
      entry.build.log_excerpt = build.value("log_excerpt", "");
      entry.build.log_path = build.value("log", "");
      for (const auto& c : e.at("cases")) entry.cases.push_back(case_from_json(c));
      if (e.contains("scores") && !e["scores"].is_null()) entry.scores = scores_from_json(e["scores"]);
      r.entries.push_back(std::move(entry));
    }
    check_unique_entries_and_cases(r);
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: malformed results: {}", origin, e.what()));
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", origin, e.what()));
  }
}

RunResults load_results(const std::string& path) {
  const std::string text = read_text_file(path);
  json document;
  try {
    document = json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  return results_from_json(document, path);
}

}  // namespace harness
