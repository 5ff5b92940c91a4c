#include "harness/runner/run_plan.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness/core/error.h"
#include "harness/device_memory/device_memory.h"
#include "harness/runner/tolerance_justification.h"

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
      throw UsageError(
          fmt::format("{}: \"expect\" names case '{}', which {} does not have (see `harness list {} --cases`)",
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

// In a selftest, a mutant or negative control needs only the suite its
// verdict is declared in, the core (correctness) cases, and any suite on
// which a tolerance is justified by its failing (tolerance_justification.h);
// the rest of the matrix would show nothing its verdict depends on. The
// float32 controls, exploits, references and baselines run every selected
// case.
std::vector<CaseSpec> selftest_cases(const std::string& challenge, const SubmissionInfo& submission,
                                     const std::vector<CaseSpec>& cases) {
  const bool declared_only = submission.role == "mutant" || submission.role == "control";
  if (!declared_only || !submission.expect) return cases;
  std::set<Suite> needed_suites = justification_suites(challenge, submission.name);
  needed_suites.insert({submission.expect->suite, Suite::correctness});
  std::vector<CaseSpec> needed;
  for (const CaseSpec& c : cases) {
    if (needed_suites.count(c.suite)) needed.push_back(c);
  }
  return needed;
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
  // Exactly two runs of digits around one slash: "1/2/3" or "1/2x" is a
  // typo, not shard 1 of 2.
  const auto slash = text.find('/');
  const auto digits = [](const std::string& part) {
    return !part.empty() && part.size() <= 9 && part.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash != std::string::npos && digits(text.substr(0, slash)) && digits(text.substr(slash + 1))) {
    const int index = std::stoi(text.substr(0, slash));
    const int count = std::stoi(text.substr(slash + 1));
    if (count >= 1 && index >= 1 && index <= count) return {index, count};
  }
  throw UsageError(fmt::format("--shard '{}': expected I/N, two whole numbers with 1 <= I <= N, e.g. 2/8", text));
}

namespace {

// Every --case id must be a case of a selected challenge in a selected
// suite; otherwise say which of those it misses and where the id lives.
void check_case_ids(const RunSelection& s, const std::vector<const Challenge*>& challenges,
                    const std::set<std::string>& matched_cases) {
  std::vector<std::string> selected_names;
  for (const Challenge* c : challenges) selected_names.push_back(c->name());
  const std::string selected = fmt::format("{}", fmt::join(selected_names, ", "));
  const std::string list_hint =
      fmt::format("see `harness list {} --cases`", challenges.size() == 1 ? challenges[0]->name() : std::string());
  for (const auto& id : s.case_ids) {
    if (id.empty()) throw UsageError("--case '': an empty case id (a stray comma?); see `harness list --cases`");
    if (matched_cases.count(id)) continue;
    std::vector<std::string> owners;
    std::string suite_of_id;
    for (const auto& challenge : all_challenges()) {
      for (const CaseSpec& c : challenge->cases()) {
        if (c.id != id) continue;
        owners.push_back(challenge->name());
        if (contains(selected_names, challenge->name())) suite_of_id = std::string(suite_name(c.suite));
      }
    }
    if (!suite_of_id.empty()) {
      throw UsageError(
          fmt::format("no case '{}' in the selected suites: it is a case of the {} suite, which --suite leaves out", id,
                      suite_of_id));
    }
    if (!owners.empty()) {
      throw UsageError(fmt::format("no case '{}' in {}: it is a case of {} (select that challenge, or {})", id,
                                   selected, fmt::join(owners, ", "), list_hint));
    }
    throw UsageError(fmt::format("no case '{}' in {}, nor in any other challenge ({})", id, selected, list_hint));
  }
}

// Every -s name must be a submission (or built-in control) of a selected challenge.
void check_submission_names(const RunSelection& s, const Catalog& catalog,
                            const std::vector<const Challenge*>& challenges) {
  for (const auto& name : s.submissions) {
    bool known = false;
    for (ControlKind kind : all_controls()) known = known || control_name(kind) == name;
    for (const SubmissionRecord& record : catalog.records()) {
      if (record.name != name) continue;
      for (const Challenge* c : challenges) known = known || record.challenge == c->name();
    }
    if (!known) {
      throw UsageError(fmt::format("no submission named '{}' in the selected challenges (see `harness list`)", name));
    }
  }
}

// The devices a selection runs on; a device it names that is missing is an
// error, one it does not name is noted.
std::vector<const DeviceInfo*> selected_devices(const RunSelection& s, const std::vector<DeviceInfo>& all_devices,
                                                std::vector<std::string>& notes) {
  if (s.device != "cpu" && s.device != "cuda" && s.device != "all") {
    throw UsageError(fmt::format("--device '{}': expected cpu, cuda or all", s.device));
  }
  std::vector<const DeviceInfo*> devices;
  for (const DeviceInfo& d : all_devices) {
    if (s.device != "all" && d.kind != s.device) continue;
    if (!d.available) {
      if (s.device == d.kind) throw UsageError(fmt::format("--device {}: {}", d.kind, d.unavailable_reason));
      if (s.judge_without_device) {
        // A CPU-only CI machine still judges what it can of these: whether
        // they build. Their cases are recorded as not run, or build_failed.
        notes.push_back(fmt::format("no {} device ({}): {} submissions are judged on their build only", d.kind,
                                    d.unavailable_reason, d.kind));
        devices.push_back(&d);
      } else {
        notes.push_back(fmt::format("{} submissions not run: {}", d.kind, d.unavailable_reason));
      }
      continue;
    }
    devices.push_back(&d);
  }
  return devices;
}

PlannedEntry entry_of_record(const Challenge* challenge, const SubmissionRecord& record) {
  PlannedEntry e;
  e.challenge = challenge;
  e.submission = record.info();
  e.build = record.build;
  e.library = record.library;
  e.process_command = record.process_command;
  if (record.manifest) {
    e.process_protocol = record.manifest->protocol;
    e.process_arrays = record.manifest->arrays;
  }
  e.folder = record.manifest ? record.manifest->folder : "";
  if (record.manifest) {
    for (const auto& dir : record.manifest->include_dirs) {
      e.include_dirs.push_back((std::filesystem::path(record.manifest->folder) / dir).lexically_normal().string());
    }
  }
  return e;
}

// The built-in controls are candidates like mutants: they run when asked for.
PlannedEntry entry_of_control(const Challenge* challenge, ControlKind kind) {
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
  return e;
}

// The cases a candidate runs in this selection; none when it is not selected.
std::vector<CaseSpec> cases_of_candidate(const RunSelection& s, const Challenge& challenge,
                                         const PlannedEntry& candidate, const std::vector<CaseSpec>& cases) {
  const std::string& name = candidate.submission.name;
  const bool named = contains(s.submissions, name);
  if (!s.submissions.empty() && !named) return {};
  const bool mutant = is_unranked_role(candidate.submission.role);
  // Mutants run only when asked for, by flag or by name.
  if (mutant && !s.with_mutants && !s.only_mutants && !named) return {};
  if (s.only_mutants && !mutant && candidate.submission.role != "reference" && candidate.submission.role != "baseline")
    return {};
  if (candidate.submission.expect && !candidate.submission.expect->cases.empty()) {
    return expected_cases(challenge, candidate.submission, s);
  }
  return s.only_mutants ? selftest_cases(challenge.name(), candidate.submission, cases) : cases;
}

// Deterministic split of the flattened (entry, case) list: every case of the
// unsharded run lands in exactly one shard.
void keep_shard(RunPlan& plan, int index, int count) {
  size_t position = 0;
  for (PlannedEntry& entry : plan.entries) {
    std::vector<CaseSpec> kept;
    for (CaseSpec& c : entry.cases) {
      if (position++ % static_cast<size_t>(count) == static_cast<size_t>(index - 1)) kept.push_back(std::move(c));
    }
    entry.cases = std::move(kept);
  }
  plan.entries.erase(
      std::remove_if(plan.entries.begin(), plan.entries.end(), [](const PlannedEntry& e) { return e.cases.empty(); }),
      plan.entries.end());
  // An empty shard would exit 0 having judged nothing, which a CI matrix
  // would read as a pass: more shards than cases is a mistake to fix.
  if (plan.entries.empty() && position > 0) {
    throw UsageError(
        fmt::format("--shard {}/{}: this shard gets no case: the selection holds {} case{}, so at most {} "
                    "shard{} can hold any",
                    index, count, position, position == 1 ? "" : "s", position, position == 1 ? "" : "s"));
  }
}

// A selection holding submissions the build never reached (a build of the
// main job's targets alone, then `harness selftest`) would judge each of
// them build_failed: a verdict on the build folder, not on the code.
void refuse_unbuilt(const RunPlan& plan) {
  std::vector<std::string> unbuilt;
  for (const PlannedEntry& entry : plan.entries) {
    if (entry.build.built) continue;
    const std::string name = entry.challenge->name() + "/" + entry.submission.name;
    if (std::find(unbuilt.begin(), unbuilt.end(), name) == unbuilt.end()) unbuilt.push_back(name);
  }
  if (unbuilt.empty()) return;
  const size_t shown = std::min<size_t>(unbuilt.size(), 3);
  std::string names;
  for (size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + unbuilt[i];
  throw UsageError(fmt::format("{} selected submission{} never built ({}{}): {}", unbuilt.size(),
                               unbuilt.size() == 1 ? " was" : "s were", names, unbuilt.size() > shown ? ", ..." : "",
                               kHowToBuildEverything));
}

}  // namespace

RunPlan make_plan(const RunSelection& s, const Catalog& catalog, const std::vector<DeviceInfo>& all_devices) {
  RunPlan plan;
  const std::vector<const DeviceInfo*> devices = selected_devices(s, all_devices, plan.notes);
  std::vector<const Challenge*> challenges;
  for (const auto& name : s.challenges) challenges.push_back(&find_challenge(name));
  if (challenges.empty()) {
    for (const auto& c : all_challenges()) challenges.push_back(c.get());
  }
  std::set<std::string> matched_cases;
  std::vector<std::vector<CaseSpec>> cases_of(challenges.size());
  for (size_t i = 0; i < challenges.size(); ++i) {
    cases_of[i] = select_cases(*challenges[i], s);
    for (const auto& c : cases_of[i]) matched_cases.insert(c.id);
  }
  check_case_ids(s, challenges, matched_cases);
  check_submission_names(s, catalog, challenges);

  for (size_t i = 0; i < challenges.size(); ++i) {
    if (cases_of[i].empty()) continue;
    std::vector<PlannedEntry> candidates;
    for (const SubmissionRecord& record : catalog.records()) {
      if (record.challenge == challenges[i]->name()) candidates.push_back(entry_of_record(challenges[i], record));
    }
    for (ControlKind kind : all_controls()) candidates.push_back(entry_of_control(challenges[i], kind));
    for (const PlannedEntry& candidate : candidates) {
      const std::vector<CaseSpec> entry_cases = cases_of_candidate(s, *challenges[i], candidate, cases_of[i]);
      if (entry_cases.empty()) continue;
      for (const DeviceInfo* device : devices_for(candidate.submission.device, devices)) {
        PlannedEntry entry = candidate;
        entry.device = device;
        entry.cases = entry_cases;
        plan.entries.push_back(std::move(entry));
      }
    }
  }
  if (s.shard) keep_shard(plan, s.shard->first, s.shard->second);
  refuse_unbuilt(plan);
  switch (device_memory_choice()) {
    case DeviceMemoryChoice::stand_in:
      plan.notes.push_back(
          "HARNESS_DEVICE_MEMORY=stand-in: compiled CPU submissions compute in device twins the harness owns and "
          "copies itself (the device path without a GPU), not in the shared buffers");
      break;
    case DeviceMemoryChoice::harness:
      plan.notes.push_back(
          "HARNESS_DEVICE_MEMORY=harness: CUDA submissions compute in device memory of the harness's own CUDA "
          "context, which it copies itself, not in device copies of their worker's own");
      break;
    case DeviceMemoryChoice::worker: break;
  }
  return plan;
}

}  // namespace harness
