#include "harness/results/case_json.h"

#include <algorithm>

namespace harness {

using nlohmann::json;

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> read_optional_number(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

json to_json(const SampleSummary& s) {
  return json{{"count", s.count}, {"median", s.median}, {"min", s.min},
              {"max", s.max},     {"mean", s.mean},     {"stddev", s.stddev},
              {"p10", s.p10},     {"p90", s.p90},       {"relative_spread", s.relative_spread}};
}

json to_json(const TimingResult& t) {
  json j{
      {"clock", t.clock},         {"samples_ns", t.samples_ns}, {"summary_ns", to_json(t.summary)}, {"sets", t.sets},
      {"set_bytes", t.set_bytes}, {"cache_cold", t.cache_cold}, {"warmup_calls", t.warmup_calls},   {"note", t.note}};
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
  if (t.machine_load) {
    j["machine_load"] = json{{"other_cores", t.machine_load->other_cores},
                             {"ours_cores", t.machine_load->ours_cores},
                             {"seconds", t.machine_load->seconds},
                             {"cores", t.machine_load->cores}};
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
  if (j.contains("machine_load")) {
    const json& m = j.at("machine_load");
    t.machine_load = TimingResult::MachineLoad{m.at("other_cores").get<double>(), m.at("ours_cores").get<double>(),
                                               m.at("seconds").get<double>(), m.value("cores", 0)};
  }
  return t;
}

json other_failures_json(const std::vector<Finding>& findings) {
  json list = json::array();
  for (const Finding& f : findings) list.push_back(json{{"verdict", verdict_name(f.verdict)}, {"message", f.message}});
  return list;
}

}  // namespace

json to_json(const CaseResult& c) {
  json j{{"id", c.id},
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
  if (!c.other_failures.empty()) j["other_failures"] = other_failures_json(c.other_failures);
  return j;
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
  for (const json& f : j.value("other_failures", json::array())) {
    c.other_failures.push_back(Finding{verdict_from_name(f.at("verdict").get<std::string>()), f.value("message", "")});
  }
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

json to_json(const Scores& s) {
  json dimensions = json::object();
  for (const auto& [name, d] : s.dimensions) {
    dimensions[name] = json{{"measured", d.measured}, {"score", d.score}, {"weight", d.weight}, {"detail", d.detail}};
  }
  return json{{"dimensions", dimensions}, {"overall", s.overall}, {"grade", s.grade},
              {"capped", s.capped},       {"ranked", s.ranked},   {"notes", s.notes}};
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

}  // namespace harness
