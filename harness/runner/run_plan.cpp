#include "harness/runner/run_plan.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "harness/core/error.h"

namespace harness {

namespace {

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::vector<CaseSpec> select_cases(const Challenge& challenge, const RunSelection& s) {
  std::vector<CaseSpec> selected;
  for (CaseSpec& c : challenge.cases()) {
    if (!s.suites.empty() && std::find(s.suites.begin(), s.suites.end(), c.suite) == s.suites.end()) continue;
    if (!s.case_ids.empty() && !contains(s.case_ids, c.id)) continue;
    if (s.quick && s.case_ids.empty() && !c.quick) continue;
    selected.push_back(std::move(c));
  }
  return selected;
}

// The cases an expectation names (an exploit aimed at particular cases),
// in matrix order, still narrowed by an explicit --case; every named id
// must exist.
std::vector<CaseSpec> expected_cases(const Challenge& challenge, const SubmissionInfo& submission,
                                     const RunSelection& s) {
  const std::vector<std::string>& wanted = submission.expect->cases;
  std::vector<CaseSpec> matrix = challenge.cases();
  for (const auto& id : wanted) {
    const bool known = std::any_of(matrix.begin(), matrix.end(), [&](const CaseSpec& c) { return c.id == id; });
    if (!known) {
      throw UsageError(fmt::format("{}: \"expect\" names case '{}', which {} does not have (see `harness list {} --cases`)",
                                   submission.manifest_path, id, challenge.name(), challenge.name()));
    }
  }
  std::vector<CaseSpec> selected;
  for (CaseSpec& c : matrix) {
    if (!contains(wanted, c.id)) continue;
    if (!s.case_ids.empty() && !contains(s.case_ids, c.id)) continue;
    selected.push_back(std::move(c));
  }
  return selected;
}

std::vector<const DeviceInfo*> devices_for(const std::string& kind, const std::vector<const DeviceInfo*>& devices) {
  std::vector<const DeviceInfo*> matching;
  for (const DeviceInfo* d : devices) {
    if (d->kind == kind) matching.push_back(d);
  }
  return matching;
}

}  // namespace

size_t RunPlan::case_count() const {
  size_t n = 0;
  for (const auto& e : entries) n += e.cases.size();
  return n;
}

std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      const int index = std::stoi(text.substr(0, slash));
      const int count = std::stoi(text.substr(slash + 1));
      if (count >= 1 && index >= 1 && index <= count) return {index, count};
    }
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("--shard '{}': expected I/N with 1 <= I <= N, e.g. 2/8", text));
}

RunPlan make_plan(const RunSelection& s, const Catalog& catalog, const std::vector<DeviceInfo>& all_devices) {
  RunPlan plan;
  if (s.device != "cpu" && s.device != "cuda" && s.device != "all") {
    throw UsageError(fmt::format("--device '{}': expected cpu, cuda or all", s.device));
  }
  std::vector<const DeviceInfo*> devices;
  for (const DeviceInfo& d : all_devices) {
    if (s.device != "all" && d.kind != s.device) continue;
    if (!d.available) {
      if (s.device == d.kind) throw UsageError(fmt::format("--device {}: {}", d.kind, d.unavailable_reason));
      plan.notes.push_back(fmt::format("{} submissions not run: {}", d.kind, d.unavailable_reason));
      continue;
    }
    devices.push_back(&d);
  }

  std::vector<const Challenge*> challenges;
  for (const auto& name : s.challenges) challenges.push_back(&find_challenge(name));
  if (challenges.empty()) {
    for (const auto& c : all_challenges()) challenges.push_back(c.get());
  }

  std::set<std::string> matched_submissions;
  std::set<std::string> matched_cases;
  for (const Challenge* challenge : challenges) {
    const std::vector<CaseSpec> cases = select_cases(*challenge, s);
    for (const auto& c : cases) matched_cases.insert(c.id);
    if (cases.empty()) continue;

    std::vector<PlannedEntry> candidates;
    for (const SubmissionRecord& record : catalog.records()) {
      if (record.challenge != challenge->name()) continue;
      PlannedEntry e;
      e.challenge = challenge;
      e.submission = record.info();
      e.build = record.build;
      e.library = record.library;
      e.process_command = record.process_command;
      e.folder = record.manifest ? record.manifest->folder : "";
      candidates.push_back(std::move(e));
    }
    {  // The built-in controls are candidates like mutants: they run when asked for.
      for (ControlKind kind : all_controls()) {
        PlannedEntry e;
        e.challenge = challenge;
        e.submission.name = control_name(kind);
        e.submission.challenge = challenge->name();
        e.submission.device = "cpu";
        e.submission.role = "control";
        e.submission.kind = "control";
        e.submission.origin = "built into the harness";
        e.submission.description = control_description(kind);
        e.submission.expect = Expectation{Suite::correctness, Verdict::wrong_answer, true, {}};
        e.control = kind;
        candidates.push_back(std::move(e));
      }
    }

    for (PlannedEntry& candidate : candidates) {
      const std::string& name = candidate.submission.name;
      const bool named = contains(s.submissions, name);
      if (!s.submissions.empty() && !named) continue;
      if (named) matched_submissions.insert(name);
      const bool mutant = is_unranked_role(candidate.submission.role);
      // Mutants run only when asked for, by flag or by name.
      if (mutant && !s.with_mutants && !s.only_mutants && !named) continue;
      if (s.only_mutants && !mutant && candidate.submission.role != "reference" && candidate.submission.role != "baseline") continue;
      const bool own_cases = candidate.submission.expect && !candidate.submission.expect->cases.empty();
      const std::vector<CaseSpec> entry_cases = own_cases ? expected_cases(*challenge, candidate.submission, s) : cases;
      if (entry_cases.empty()) continue;
      for (const DeviceInfo* device : devices_for(candidate.submission.device, devices)) {
        PlannedEntry entry = candidate;
        entry.device = device;
        entry.cases = entry_cases;
        plan.entries.push_back(std::move(entry));
      }
    }
  }

  for (const auto& name : s.submissions) {
    if (!matched_submissions.count(name)) {
      throw UsageError(fmt::format("no submission named '{}' in the selected challenges (see `harness list`)", name));
    }
  }
  for (const auto& id : s.case_ids) {
    if (!matched_cases.count(id)) {
      throw UsageError(fmt::format("no case '{}' in the selected challenges and suites (see `harness list --cases`)", id));
    }
  }

  if (s.shard) {
    // Deterministic split of the flattened (entry, case) list: every case of
    // the unsharded run lands in exactly one shard.
    const auto [index, count] = *s.shard;
    size_t position = 0;
    for (PlannedEntry& entry : plan.entries) {
      std::vector<CaseSpec> kept;
      for (CaseSpec& c : entry.cases) {
        if (position++ % static_cast<size_t>(count) == static_cast<size_t>(index - 1)) kept.push_back(std::move(c));
      }
      entry.cases = std::move(kept);
    }
    plan.entries.erase(std::remove_if(plan.entries.begin(), plan.entries.end(),
                                      [](const PlannedEntry& e) { return e.cases.empty(); }),
                       plan.entries.end());
  }
  return plan;
}

}  // namespace harness
