#include "harness/compare/merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "harness/challenge_api/challenge.h"
#include "harness/core/error.h"
#include "harness/scoring/scoring.h"

namespace harness {

namespace {

using EntryKey = std::tuple<std::string, std::string, std::string>;  // challenge, submission, device

EntryKey key_of(const EntryResult& e) { return {e.challenge, e.submission.name, e.device}; }

// Cases in the order of the challenge's matrix, as an unsharded run lists them.
void sort_cases(EntryResult& entry) {
  std::map<std::string, size_t> position;
  for (const auto& challenge : all_challenges()) {
    if (challenge->name() != entry.challenge) continue;
    size_t i = 0;
    for (const auto& spec : challenge->cases()) position[spec.id] = i++;
  }
  std::stable_sort(entry.cases.begin(), entry.cases.end(), [&](const CaseResult& a, const CaseResult& b) {
    const auto pa = position.count(a.id) ? position[a.id] : position.size();
    const auto pb = position.count(b.id) ? position[b.id] : position.size();
    return pa < pb;
  });
}

// Shards of one run share its seed, its code and every option that decides
// which cases run and how: otherwise the merged file would mix inputs (and
// name one seed in its header) or shards that never partitioned one run.
void check_same_run(const NamedResults& first, const NamedResults& other) {
  const RunInfo& a = first.results.run;
  const RunInfo& b = other.results.run;
  if (a.seed != b.seed) {
    throw UsageError(
        fmt::format("merge: {} ran with seed {} but {} with seed {}: shards of one run share a seed "
                    "(give every shard the same --seed)",
                    first.origin, a.seed, other.origin, b.seed));
  }
  if (!a.git_commit.empty() && !b.git_commit.empty() && a.git_commit != b.git_commit) {
    throw UsageError(
        fmt::format("merge: {} was run at commit {} but {} at commit {}: shards of one run test the same code",
                    first.origin, a.git_commit, other.origin, b.git_commit));
  }
  for (const char* key : {"quick", "device", "call_timeout_s", "with_mutants", "device_memory", "sanitize"}) {
    const nlohmann::json none;
    const nlohmann::json& va = a.options.contains(key) ? a.options[key] : none;
    const nlohmann::json& vb = b.options.contains(key) ? b.options[key] : none;
    if (va != vb) {
      throw UsageError(fmt::format("merge: option {} is {} in {} but {} in {}: shards of one run share their options",
                                   key, va.dump(), first.origin, vb.dump(), other.origin));
    }
  }
  const auto shard_count = [](const RunInfo& run) -> std::string {
    const std::string shard = run.options.value("shard", "");
    return shard.substr(shard.find('/') + 1);
  };
  if (a.options.contains("shard") && b.options.contains("shard") && shard_count(a) != shard_count(b)) {
    throw UsageError(
        fmt::format("merge: {} is shard {} but {} is shard {}: shards of one run split it the same number of ways",
                    first.origin, a.options.value("shard", ""), other.origin, b.options.value("shard", "")));
  }
}

}  // namespace

RunResults merge_results(const std::vector<NamedResults>& inputs) {
  if (inputs.empty()) throw UsageError("merge: no results files given");
  RunResults merged;
  const NamedResults& first = inputs.front();
  merged.run = first.results.run;
  std::vector<std::string> origins;
  std::map<std::string, std::string> device_origin;
  std::map<EntryKey, size_t> entry_index;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::string> case_origin;

  for (const NamedResults& input : inputs) {
    const RunResults& r = input.results;
    origins.push_back(input.origin);
    if (r.run.harness_version != first.results.run.harness_version) {
      throw UsageError(
          fmt::format("merge: {} was written by harness {} but {} by harness {}: merge results of one version",
                      first.origin, first.results.run.harness_version, input.origin, r.run.harness_version));
    }
    check_same_run(first, input);
    merged.run.started = std::min(merged.run.started, r.run.started);
    merged.run.finished = std::max(merged.run.finished, r.run.finished);
    merged.run.complete = merged.run.complete && r.run.complete;
    if (&input != &first) merged.run.command_line += "\n" + r.run.command_line;

    for (const DeviceInfo& d : r.devices) {
      const DeviceInfo* known = merged.device(d.id);
      if (!known) {
        merged.devices.push_back(d);
        device_origin[d.id] = input.origin;
      } else if (known->available && d.available && known->name != d.name) {
        throw UsageError(fmt::format(
            "merge: device {} is '{}' in {} but '{}' in {}: results of different devices cannot share one ranking",
            d.id, known->name, device_origin[d.id], d.name, input.origin));
      }
    }
    for (const EntryResult& e : r.entries) {
      auto it = entry_index.find(key_of(e));
      if (it == entry_index.end()) {
        it = entry_index.emplace(key_of(e), merged.entries.size()).first;
        EntryResult copy = e;
        copy.cases.clear();
        merged.entries.push_back(std::move(copy));
      }
      EntryResult& target = merged.entries[it->second];
      for (const CaseResult& c : e.cases) {
        const auto case_key = std::make_tuple(e.challenge, e.submission.name, e.device, c.id);
        const auto seen = case_origin.find(case_key);
        if (seen != case_origin.end()) {
          throw UsageError(fmt::format("merge: case {} of {} on {} ({}) is in both {} and {}", c.id, e.submission.name,
                                       e.device, e.challenge, seen->second, input.origin));
        }
        case_origin.emplace(case_key, input.origin);
        target.cases.push_back(c);
      }
    }
  }
  for (EntryResult& e : merged.entries) sort_cases(e);
  merged.run.options["merged_from"] = origins;
  merged.run.options.erase("shard");
  score_results(merged);
  return merged;
}

}  // namespace harness
