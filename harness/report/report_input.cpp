#include "harness/report/report_input.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/scoring/scoring.h"

namespace harness {

namespace {

// Where a device of one run really is: its name and the run's host.
std::string identity(const RunResults& r, const DeviceInfo& d) { return d.name + "\n" + r.run.host.hostname; }

std::string file_stem(const std::string& origin) { return std::filesystem::path(origin).stem().string(); }

}  // namespace

ReportInput combine_for_report(const std::vector<NamedResults>& runs) {
  ReportInput input;
  input.runs = runs;
  RunResults& out = input.combined;
  if (runs.empty()) return input;
  out.run = runs.front().results.run;
  std::map<std::string, std::string> identity_of_id;  // combined device id -> identity
  std::set<std::tuple<std::string, std::string, std::string>> entries_seen;
  for (const NamedResults& named : runs) {
    const RunResults& r = named.results;
    out.run.complete = out.run.complete && r.run.complete;
    std::map<std::string, std::string> renamed;  // this run's id -> combined id
    for (const DeviceInfo& d : r.devices) {
      std::string id = d.id;
      for (int n = 1;; ++n) {
        const auto known = identity_of_id.find(id);
        if (known == identity_of_id.end() || known->second == identity(r, d)) break;
        id = n == 1 ? fmt::format("{}@{}", d.id, r.run.host.hostname)
                    : fmt::format("{}@{}#{}", d.id, r.run.host.hostname, n);
      }
      renamed[d.id] = id;
      if (!identity_of_id.count(id)) {
        identity_of_id[id] = identity(r, d);
        DeviceInfo copy = d;
        copy.id = id;
        out.devices.push_back(copy);
      }
    }
    for (EntryResult e : r.entries) {
      e.device = renamed.count(e.device) ? renamed[e.device] : e.device;
      if (!entries_seen.emplace(e.challenge, e.submission.name, e.device).second) {
        e.submission.name = fmt::format("{} [{}]", e.submission.name, file_stem(named.origin));
      }
      out.entries.push_back(std::move(e));
    }
  }
  score_results(out);
  return input;
}

std::vector<ReviewerScore> load_reviewer_scores(const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_text_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  std::vector<ReviewerScore> reviews;
  try {
    for (const auto& item : doc.at("reviews")) {
      ReviewerScore r;
      r.challenge = item.at("challenge").get<std::string>();
      r.submission = item.at("submission").get<std::string>();
      r.dimension = item.at("dimension").get<std::string>();
      r.score = item.at("score").get<double>();
      r.reviewer = item.value("reviewer", "");
      r.note = item.value("note", "");
      if (r.score < 0 || r.score > 100)
        throw UsageError(fmt::format("score {} of {} is outside 0..100", r.score, r.submission));
      reviews.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format(
        "{}: expected {{\"reviews\": [{{\"challenge\", \"submission\", \"dimension\", \"score\", ...}}]}}: {}", path,
        e.what()));
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path, e.what()));
  }
  return reviews;
}

}  // namespace harness
