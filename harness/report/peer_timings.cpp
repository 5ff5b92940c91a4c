#include "harness/report/peer_timings.h"

#include <cmath>

#include "harness/core/error.h"
#include "harness/core/files.h"

namespace harness {

using nlohmann::json;

namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& problem) {
  throw UsageError(fmt::format("{}: {}", path, problem));
}

std::string text(const json& j, const char* key, const std::string& where, const std::string& path) {
  if (!j.contains(key) || !j[key].is_string()) invalid(path, fmt::format("{}: \"{}\" must be a string", where, key));
  return j[key].get<std::string>();
}

}  // namespace

PeerTimings load_peer_timings(const std::string& path) {
  json doc;
  try {
    doc = json::parse(read_text_file(path));
  } catch (const json::exception& e) {
    invalid(path, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object() || doc.value("schema", "") != "harness.peer/v1") {
    invalid(
        path,
        "not a peer timings file (expected \"schema\": \"harness.peer/v1\", as scripts/gpu/pytorch_eager.py writes)");
  }
  PeerTimings peer;
  peer.origin = path;
  peer.peer = text(doc, "peer", "the file", path);
  peer.device = text(doc, "device", "the file", path);
  peer.device_kind = doc.value("device_kind", "cuda");
  if (peer.device_kind != "cuda" && peer.device_kind != "cpu") {
    invalid(path, fmt::format("\"device_kind\" '{}' must be cuda or cpu", peer.device_kind));
  }
  if (!doc.contains("cases") || !doc["cases"].is_array()) invalid(path, "\"cases\" must be an array");
  for (size_t i = 0; i < doc["cases"].size(); ++i) {
    const json& c = doc["cases"][i];
    const std::string where = fmt::format("cases[{}]", i);
    if (!c.is_object()) invalid(path, where + " must be an object");
    PeerTiming t;
    t.challenge = text(c, "challenge", where, path);
    t.case_id = text(c, "id", where, path);
    t.variant = c.value("variant", "");
    t.ops = c.value("ops", "");
    if (c.contains("when")) {
      if (!c["when"].is_object()) invalid(path, where + ": \"when\" must be an object of case metrics");
      t.when = c["when"];
    }
    if (!c.contains("median_ns") || !c["median_ns"].is_number())
      invalid(path, where + ": \"median_ns\" must be a number");
    t.median_ns = c["median_ns"].get<double>();
    if (!std::isfinite(t.median_ns) || t.median_ns <= 0) {
      invalid(path, fmt::format("{}: median_ns {} must be a positive time", where, t.median_ns));
    }
    peer.timings.push_back(std::move(t));
  }
  return peer;
}

PeerTimings judged_peer_timings(const EntryResult& peer, const std::string& device_name,
                                const std::string& device_kind) {
  PeerTimings p;
  p.origin = "judged in this run";
  p.peer = peer.submission.name;
  p.device = device_name;
  p.device_kind = device_kind;
  for (const CaseResult& c : peer.cases) {
    if (c.suite != Suite::perf || c.verdict != Verdict::pass || !c.timing) continue;
    const double median = c.timing->scored_median_ns();
    if (median > 0) p.timings.push_back({peer.challenge, c.id, "", "", nlohmann::json::object(), median});
  }
  return p;
}

}  // namespace harness
