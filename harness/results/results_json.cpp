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

const DeviceInfo* RunResults::device(const std::string& id) const {
  for (const auto& d : devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> read_optional_number(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

json to_json(const SampleSummary& s) {
  return json{{"count", s.count},   {"median", s.median}, {"min", s.min},
              {"max", s.max},       {"mean", s.mean},     {"stddev", s.stddev},
              {"p10", s.p10},       {"p90", s.p90},       {"relative_spread", s.relative_spread}};
}

json to_json(const TimingResult& t) {
  json j{{"clock", t.clock},
              {"samples_ns", t.samples_ns},
              {"summary_ns", to_json(t.summary)},
              {"sets", t.sets},
              {"set_bytes", t.set_bytes},
              {"cache_cold", t.cache_cold},
              {"warmup_calls", t.warmup_calls},
              {"note", t.note}};
  if (t.witness) {
    j["witness"] = json{{"request_ns", t.witness->request_ns}, {"overhead_ns", t.witness->overhead_ns},
                        {"calls_ns", t.witness->calls_ns},     {"calls", t.witness->calls},
                        {"floor_ns", t.witness->floor_ns},     {"requests", t.witness->requests}};
    if (t.witness->median_excess) j["witness"]["median_excess"] = std::min(*t.witness->median_excess, 1e300);
    if (t.witness->staged) {
      j["witness"]["staged"] = true;
      j["witness"]["staging_ns"] = t.witness->staging_ns;
      j["witness"]["staging_counted_ns"] = t.witness->staging_counted_ns;
      if (t.witness->staging_allowed_ns) j["witness"]["staging_allowed_ns"] = *t.witness->staging_allowed_ns;
    }
  }
  return j;
}

TimingResult timing_from_json(const json& j) {
  TimingResult t;
  t.clock = j.at("clock").get<std::string>();
  t.samples_ns = j.at("samples_ns").get<std::vector<double>>();
  t.summary = summarize(t.samples_ns);
  t.sets = j.value("sets", size_t{0});
  t.set_bytes = j.value("set_bytes", 0.0);
  t.cache_cold = j.value("cache_cold", false);
  t.warmup_calls = j.value("warmup_calls", size_t{0});
  t.note = j.value("note", "");
  if (j.contains("witness")) {
    const json& w = j.at("witness");
    TimingResult::Witness witness;
    witness.request_ns = w.value("request_ns", 0.0);
    witness.overhead_ns = w.value("overhead_ns", 0.0);
    witness.calls_ns = w.value("calls_ns", 0.0);
    witness.calls = w.value("calls", size_t{0});
    witness.floor_ns = w.value("floor_ns", 0.0);
    if (w.contains("median_excess")) witness.median_excess = w.at("median_excess").get<double>();
    witness.requests = w.value("requests", size_t{0});
    witness.staged = w.value("staged", false);
    witness.staging_ns = w.value("staging_ns", 0.0);
    witness.staging_counted_ns = w.value("staging_counted_ns", 0.0);
    if (w.contains("staging_allowed_ns")) witness.staging_allowed_ns = w.at("staging_allowed_ns").get<double>();
    t.witness = witness;
  }
  return t;
}

}  // namespace

namespace {


json to_json(const HostInfo& h) {
  return json{{"hostname", h.hostname},           {"os", h.os},
              {"cpu_model", h.cpu_model},         {"logical_cores", h.logical_cores},
              {"memory_bytes", h.memory_bytes},   {"last_level_cache_bytes", h.last_level_cache_bytes}};
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

CaseResult case_from_json(const json& j) {
  CaseResult c;
  c.id = j.at("id").get<std::string>();
  c.suite = suite_from_name(j.at("suite").get<std::string>());
  c.params = j.value("params", json::object());
  c.description = j.value("description", "");
  c.seed = j.at("seed").get<uint64_t>();
  c.verdict = verdict_from_name(j.at("verdict").get<std::string>());
  c.message = j.value("message", "");
  c.metrics = j.value("metrics", json::object());
  if (j.contains("timing") && !j["timing"].is_null()) c.timing = timing_from_json(j["timing"]);
  // Results written before reads and writes were told apart carry only
  // the total: it is kept as read, and no roofline is invented for it.
  c.bytes.read = j.value("bytes_read", j.value("bytes_moved", 0.0));
  c.bytes.written = j.value("bytes_written", 0.0);
  c.roofline = read_optional_number(j, "roofline_bytes_per_second");
  c.bandwidth = read_optional_number(j, "bandwidth_bytes_per_second");
  c.peak_fraction = read_optional_number(j, "peak_fraction");
  c.reproduce = j.value("reproduce", "");
  c.worker_output = j.value("worker_output", "");
  c.seconds = j.value("seconds", 0.0);
  return c;
}

Scores scores_from_json(const json& j) {
  Scores s;
  for (const auto& [name, d] : j.at("dimensions").items()) {
    DimensionScore dim;
    dim.measured = d.value("measured", false);
    dim.score = d.value("score", 0.0);
    dim.weight = d.value("weight", 0.0);
    dim.detail = d.value("detail", "");
    s.dimensions[name] = dim;
  }
  s.overall = j.at("overall").get<double>();
  s.grade = j.at("grade").get<std::string>();
  s.capped = j.value("capped", false);
  s.ranked = j.value("ranked", true);
  s.notes = j.value("notes", std::vector<std::string>{});
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

json to_json(const CaseResult& c) {
  return json{{"id", c.id},
              {"suite", suite_name(c.suite)},
              {"params", c.params},
              {"description", c.description},
              {"seed", c.seed},
              {"verdict", verdict_name(c.verdict)},
              {"message", c.message},
              {"metrics", c.metrics},
              {"timing", c.timing ? to_json(*c.timing) : json(nullptr)},
              {"bytes_moved", c.bytes.total()},
              {"bytes_read", c.bytes.read},
              {"bytes_written", c.bytes.written},
              {"bandwidth_bytes_per_second", optional_number(c.bandwidth)},
              {"roofline_bytes_per_second", optional_number(c.roofline)},
              {"peak_fraction", optional_number(c.peak_fraction)},
              {"reproduce", c.reproduce},
              {"worker_output", c.worker_output},
              {"seconds", c.seconds}};
}

json to_json(const Scores& s) {
  json dimensions = json::object();
  for (const auto& [name, d] : s.dimensions) {
    dimensions[name] = json{{"measured", d.measured}, {"score", d.score}, {"weight", d.weight}, {"detail", d.detail}};
  }
  return json{{"dimensions", dimensions}, {"overall", s.overall}, {"grade", s.grade},
              {"capped", s.capped},       {"ranked", s.ranked},   {"notes", s.notes}};
}

json to_json(const RunResults& r) {
  json entries = json::array();
  for (const auto& e : r.entries) {
    json cases = json::array();
    for (const auto& c : e.cases) cases.push_back(to_json(c));
    entries.push_back(json{{"challenge", e.challenge},
                           {"submission", to_json(e.submission)},
                           {"device", e.device},
                           {"build", json{{"status", e.build.status}, {"reason", e.build.reason}, {"log_excerpt", e.build.log_excerpt},
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
  return json{{"schema", kResultsSchema},
              {"run", run},
              {"devices", devices},
              {"results", entries}};
}

namespace {

// One entry per (challenge, submission, device) and one result per case id
// within it: a file edited by hand or concatenated from two runs would
// otherwise count a case twice in scores, reports and gates.
void check_unique_entries_and_cases(const RunResults& r) {
  std::set<std::tuple<std::string, std::string, std::string>> entries;
  for (const EntryResult& e : r.entries) {
    if (!entries.emplace(e.challenge, e.submission.name, e.device).second) {
      throw UsageError(fmt::format("the entry of {} / {} on {} appears more than once", e.challenge, e.submission.name,
                                   e.device));
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
