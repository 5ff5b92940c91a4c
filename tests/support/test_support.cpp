#include "support/test_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "harness/device/peak_cache.h"
#include "harness/runner/runner.h"
#include "harness/scoring/scoring.h"
#include "harness/submissions/catalog.h"

namespace harness::testing {

CommandResult run_shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> chunk{};
  while (size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) result.output.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

void remove_run_folders(int pid) {
  const std::string name = "harness-run-" + std::to_string(pid);
  std::error_code ignored;
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / name, ignored);
  std::filesystem::remove_all(std::filesystem::path("/dev/shm") / name, ignored);
}

CommandResult run_cli(const std::string& arguments, const std::string& environment) {
  return run_shell(environment + (environment.empty() ? "" : " ") + HARNESS_CLI + " " + arguments);
}

TempFolder::TempFolder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "harness-test-XXXXXX").string();
  root_ = ::mkdtemp(pattern.data());
}

TempFolder::~TempFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

std::string TempFolder::path(const std::string& name) const { return root_ + "/" + name; }

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  if (const char* was = std::getenv(name)) before_ = was;
  ::setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (before_) {
    ::setenv(name_.c_str(), before_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

const Catalog& fixture_catalog() {
  static const Catalog catalog = Catalog::load(HARNESS_FIXTURE_INDEX);
  return catalog;
}

const Catalog& project_catalog() {
  static const Catalog catalog = Catalog::load(std::string(HARNESS_BUILD_DIR) + "/submission_index.json");
  return catalog;
}

const std::vector<DeviceInfo>& cpu_devices() {
  static const std::vector<DeviceInfo> devices = [] {
    std::vector<DeviceInfo> all = discover_devices();
    std::vector<DeviceInfo> cpu;
    for (auto& d : all) {
      if (d.kind == "cpu") {
        std::string note;
        d.peak = obtain_peak(d, true, PeakSource::cache, note);
        cpu.push_back(d);
      }
    }
    return cpu;
  }();
  return devices;
}

RunResults run_selection(const RunSelection& selection, const Catalog& catalog, RunSettings settings) {
  RunSelection s = selection;
  s.device = "cpu";
  if (settings.seed == 0) settings.seed = 20261121;
  const RunPlan plan = make_plan(s, catalog, cpu_devices());
  RunResults results;
  results.devices = cpu_devices();
  results.run.seed = settings.seed;
  RunObserver quiet;
  // A speed beyond the roofline is checked against a quick measurement, kept
  // for this run only.
  SpeedOfLight speed_of_light([](const DeviceInfo& d) { return measure_peak(d, true); }, {});
  execute_plan(
      plan, settings, results, quiet, [](const RunResults&) {}, speed_of_light);
  results.run.complete = true;
  score_results(results);
  return results;
}

RunResults run_softmax_cases(const std::string& submission, const std::vector<std::string>& case_ids,
                             const Catalog& catalog, RunSettings settings) {
  RunSelection selection;
  selection.challenges = {"softmax_topk"};
  selection.submissions = {submission};
  selection.case_ids = case_ids;
  return run_selection(selection, catalog, settings);
}

EntryResult entry_with_case(const std::string& challenge, const std::string& submission, const std::string& device,
                            CaseResult c) {
  EntryResult e;
  e.challenge = challenge;
  e.device = device;
  e.submission.name = submission;
  e.submission.role = "submission";
  e.build.status = "ok";
  e.cases.push_back(std::move(c));
  return e;
}

std::string markdown_sections(const std::string& markdown, const std::string& heading) {
  std::string sections;
  for (size_t start = markdown.find(heading); start != std::string::npos; start = markdown.find(heading, start + 1)) {
    sections += markdown.substr(start, markdown.find("\n\n", markdown.find("\n|", start)) - start) + "\n";
  }
  return sections;
}

const EntryResult& entry_of(const RunResults& results, const std::string& submission) {
  for (const auto& e : results.entries) {
    if (e.submission.name == submission) return e;
  }
  ADD_FAILURE() << "no results for submission " << submission;
  static const EntryResult none;
  return none;
}

const CaseResult& case_of(const EntryResult& entry, const std::string& case_id) {
  for (const auto& c : entry.cases) {
    if (c.id == case_id) return c;
  }
  ADD_FAILURE() << "no case " << case_id << " for " << entry.submission.name;
  static const CaseResult none;
  return none;
}

}  // namespace harness::testing
