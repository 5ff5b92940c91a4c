#include "harness/submissions/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/definitions/challenge_config.h"
#include "harness/submissions/process_command.h"

#ifndef HARNESS_BUILD_DIR
#error "HARNESS_BUILD_DIR must be defined by the build"
#endif

namespace harness {

using nlohmann::json;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void read_build(SubmissionRecord& record, const std::string& build_dir) {
  const std::string status_path = build_dir + "/build.json";
  if (!file_exists(status_path)) {
    record.build.status = "failed";
    record.build.built = false;
    record.build.reason = std::string("not built: ") + kHowToBuildEverything;
    return;
  }
  try {
    const json status = json::parse(read_text_file(status_path));
    record.build.status = status.value("status", "failed");
    record.build.reason = status.value("reason", "");
    record.library = status.value("library", "");
    record.build_log_path = status.value("log", "");
    record.build.log_path = record.build_log_path;
  } catch (const std::exception& e) {
    record.build.status = "failed";
    record.build.reason = fmt::format("unreadable {}: {}", status_path, e.what());
    return;
  }
  if (record.build.status != "ok" && !record.build_log_path.empty() && file_exists(record.build_log_path)) {
    record.build.log_excerpt = build_log_excerpt(read_text_file(record.build_log_path));
  }
}

}  // namespace

std::string build_log_excerpt(const std::string& log, size_t max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<std::string> picked;
  for (size_t i = 0; i < lines.size() && picked.size() < max_lines; ++i) {
    if (lower(lines[i]).find("error") == std::string::npos) continue;
    picked.push_back(lines[i]);
    if (i + 1 < lines.size() && picked.size() < max_lines) picked.push_back(lines[++i]);
  }
  if (picked.empty()) {
    const size_t from = lines.size() > max_lines ? lines.size() - max_lines : 0;
    picked.assign(lines.begin() + static_cast<std::ptrdiff_t>(from), lines.end());
  }
  std::string text;
  for (const auto& l : picked) text += l + "\n";
  return text;
}

std::string build_failure_summary(const BuildInfo& build) {
  std::string first_error;
  std::istringstream in(build.log_excerpt);
  for (std::string line; std::getline(in, line);) {
    if (lower(line).find("error") != std::string::npos) {
      first_error = line;
      break;
    }
  }
  std::string summary = build.reason;
  if (!first_error.empty()) summary += ": " + first_error;
  if (!build.log_path.empty()) summary += fmt::format(" (full log: {})", build.log_path);
  return summary;
}

SubmissionInfo SubmissionRecord::info() const {
  SubmissionInfo s;
  s.name = name;
  s.challenge = challenge;
  s.manifest_path = manifest_path;
  if (manifest) {
    s.device = manifest->device;
    s.role = manifest->role;
    s.origin = manifest->origin;
    s.description = manifest->description;
    s.expect = manifest->expect;
    s.kind = manifest->kind;
  } else {
    s.device = "cpu";
    s.role = "submission";
    s.description = manifest_error;
  }
  return s;
}

std::string Catalog::default_index_path() {
  if (const char* chosen = std::getenv("HARNESS_SUBMISSION_INDEX"); chosen && *chosen) return chosen;
  const std::string beside = executable_dir() + "/submission_index.json";
  if (file_exists(beside)) return beside;
  return std::string(HARNESS_BUILD_DIR) + "/submission_index.json";
}

namespace {

void refuse(SubmissionRecord& record, const std::string& why) {
  record.manifest_error = fmt::format("{}: {}", record.manifest_path, why);
  record.build.status = "failed";
  record.build.reason = record.manifest_error;
  record.manifest.reset();
}

// A manifest the catalogue's rules refuse, kept for what it says of itself
// (its role, the verdict an exploit expects), its every case build_failed.
void refuse_to_build(SubmissionRecord& record, const std::string& why) {
  record.build.status = "failed";
  record.build.reason = fmt::format("{}: {}", record.manifest_path, why);
  record.library.clear();
  record.process_command.clear();
}

// The folder of the challenge's naive baseline on this record's device, as
// challenge.json names it ("baselines"); empty where it names none.
std::string configured_baseline(const SubmissionRecord& record) {
  const ChallengeConfig* config = find_challenge_config(record.challenge);
  if (!config || !record.manifest) return "";
  const auto it = config->baselines.find(record.manifest->device);
  return it == config->baselines.end() ? "" : it->second;
}

bool is_configured_baseline(const SubmissionRecord& record) {
  const std::string configured = configured_baseline(record);
  if (configured.empty()) return false;
  std::error_code ec;
  return std::filesystem::equivalent(std::filesystem::path(HARNESS_SOURCE_DIR) / configured, record.manifest->folder,
                                     ec);
}

// A process submission reads its include folders at run time (compiled
// ones only compile with them): they stay inside the folder it was found
// in, or it could read the project's build, other submissions' libraries
// among it (process-exploit-borrowed-library).
void refuse_process_reads_outside_the_root(std::vector<SubmissionRecord>& records) {
  for (SubmissionRecord& record : records) {
    if (!record.manifest || record.manifest->kind != "process" || record.root.empty()) continue;
    for (const std::string& dir : record.manifest->include_dirs) {
      if (!path_holds(record.root, (std::filesystem::path(record.manifest->folder) / dir).string())) {
        refuse_to_build(record, fmt::format("\"include_dirs\": '{}' lies outside '{}', where a process submission's "
                                            "include folders must be (it reads them when it runs)",
                                            dir, record.root));
        break;
      }
    }
  }
}

// Every entry's speedup is measured against the baseline, so the role is
// the challenge's to give, not a manifest's to take: a submission calling
// itself the baseline (a slow one lifts every speedup, its own included; a
// fast one zeroes everyone else's) is refused.
void refuse_unconfigured_baselines(std::vector<SubmissionRecord>& records) {
  for (SubmissionRecord& record : records) {
    if (!record.manifest || record.manifest->role != "baseline" || is_configured_baseline(record)) continue;
    const std::string configured = configured_baseline(record);
    record.manifest->role = "submission";  // never scored against, whatever else it is
    refuse_to_build(record,
                    configured.empty()
                        ? fmt::format("role \"baseline\": challenges/{}/challenge.json names no {} baseline",
                                      record.challenge, record.manifest->device)
                        : fmt::format("role \"baseline\" belongs to the folder challenges/{}/challenge.json names for "
                                      "{} (\"baselines\": {}), not to this one",
                                      record.challenge, record.manifest->device, configured));
  }
}

// One name per challenge. The configured baseline keeps its name whatever
// sorts before it (a folder "a" naming itself "cpu-naive" would otherwise
// push the real baseline out); otherwise the first in the index does.
void refuse_duplicate_names(std::vector<SubmissionRecord>& records) {
  std::map<std::pair<std::string, std::string>, size_t> owner;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!records[i].manifest) continue;
    const auto key = std::make_pair(records[i].challenge, records[i].name);
    const auto it = owner.find(key);
    if (it == owner.end() || (is_configured_baseline(records[i]) && !is_configured_baseline(records[it->second]))) {
      owner[key] = i;
    }
  }
  for (size_t i = 0; i < records.size(); ++i) {
    if (!records[i].manifest) continue;
    const size_t kept = owner.at(std::make_pair(records[i].challenge, records[i].name));
    if (kept != i) {
      refuse(records[i],
             fmt::format("the name '{}' is already used by {}", records[i].name, records[kept].manifest_path));
    }
  }
}

}  // namespace

Catalog Catalog::load(const std::string& index_path) {
  if (!file_exists(index_path)) {
    throw UsageError(fmt::format("no submission index at '{}': configure and build the project first", index_path));
  }
  json index;
  try {
    index = json::parse(read_text_file(index_path));
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON: {}", index_path, e.what()));
  }
  Catalog catalog;
  for (const auto& item : index) {
    SubmissionRecord record;
    record.manifest_path = item.at("manifest").get<std::string>();
    record.root = item.value("root", "");
    try {
      record.manifest = load_manifest(record.manifest_path);
      record.name = record.manifest->name;
      record.challenge = record.manifest->challenge;
    } catch (const UsageError& e) {
      record.manifest_error = e.what();
      // Still name it as well as the raw file allows, so the report can.
      try {
        const json raw = json::parse(read_text_file(record.manifest_path));
        record.name = raw.value("name", "");
        record.challenge = raw.value("challenge", "");
      } catch (...) {
      }
      if (record.name.empty()) record.name = record.manifest_path;
    }
    if (record.manifest && record.manifest->kind == "process") {
      std::string why;
      std::vector<std::string> modules = record.manifest->imports;
      if (record.manifest->arrays != "numpy") modules.insert(modules.begin(), record.manifest->arrays);
      const auto resolved = resolve_process_command(record.manifest->command, record.manifest->folder, &why, modules);
      record.build.status = resolved ? "ok" : "unavailable";
      record.build.reason = resolved ? resolved->note : why;
      if (resolved) record.process_command = resolved->argv;
    } else {
      read_build(record, item.at("build_dir").get<std::string>());
    }
    if (!record.manifest_error.empty()) {
      record.build.status = "failed";
      record.build.reason = record.manifest_error;
    }
    catalog.records_.push_back(std::move(record));
  }
  refuse_process_reads_outside_the_root(catalog.records_);
  refuse_unconfigured_baselines(catalog.records_);
  refuse_duplicate_names(catalog.records_);
  return catalog;
}

}  // namespace harness
