#include "harness/runner/runner.h"

#include <unistd.h>

#include <filesystem>

#include "harness/challenge_api/case_context.h"
#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/core/rng.h"
#include "harness/core/utf8.h"
#include "harness/executors/control_executor.h"
#include "harness/executors/process_executor.h"
#include "harness/executors/worker_executor.h"
#include "harness/results/bandwidth_figures.h"
#include "harness/runner/failure_verdict.h"
#include "harness/sandbox/memory_limit.h"
#include "harness/sandbox/sandbox.h"
#include "harness/witness/witness_parts.h"

namespace harness {

namespace {

constexpr size_t kWorkerOutputKept = 2000;

std::string worker_executable() {
  const std::string beside = executable_dir() + "/harness-worker";
  if (file_exists(beside)) return beside;
  return std::string(HARNESS_BUILD_DIR) + "/harness-worker";
}

// Room a memory file system must have for process submissions' tensors: a
// perf case's input sets and outputs, twice over.
constexpr unsigned long long kTensorRoomBytes = 4ULL << 30;

// The folders of this run, removed at the end: one for the worker logs, one
// for process submissions' tensor files (in memory where it can be).
class ScratchFolder {
 public:
  ScratchFolder() {
    const std::string name = fmt::format("harness-run-{}", ::getpid());
    path_ = std::filesystem::temp_directory_path() / name;
    tensors_ = std::filesystem::path(memory_backed_temp_directory(kTensorRoomBytes)) / name;
    std::filesystem::create_directories(path_);
    std::filesystem::create_directories(tensors_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    std::filesystem::remove_all(tensors_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string tensor_folder(const std::string& name) const { return (tensors_ / name).string(); }

 private:
  std::filesystem::path path_;
  std::filesystem::path tensors_;
};

std::unique_ptr<Executor> make_executor(const PlannedEntry& entry, const ScratchFolder& scratch) {
  if (entry.control) return std::make_unique<ControlExecutor>(*entry.control, *entry.challenge);
  const std::string stem = fmt::format("{}-{}-{}", entry.challenge->name(), entry.submission.name,
                                       entry.device->kind + std::to_string(entry.device->index));
  if (entry.submission.kind == "process") {
    ProcessTarget target;
    target.challenge = entry.challenge->name();
    target.abi_version = entry.challenge->abi_version();
    target.command = entry.process_command;
    target.folder = entry.folder;
    target.include_dirs = entry.include_dirs;
    target.log_path = scratch.file(stem + ".log");
    target.scratch = scratch.tensor_folder(stem + ".tensors");
    target.declared_ops = entry.challenge->config().raw.at("ops");
    return std::make_unique<ProcessExecutor>(std::move(target));
  }
  WorkerTarget target;
  target.challenge = entry.challenge->name();
  target.library = entry.library;
  target.device_kind = entry.device->kind;
  target.device_index = entry.device->index;
  target.worker_executable = worker_executable();
  target.log_path = scratch.file(stem + ".log");
  target.stage_copies = target.device_kind == "cuda" && !witness_part_disabled("gpu-staging");
  return std::make_unique<WorkerExecutor>(std::move(target));
}

CaseResult blank_result(const RunSettings& settings, const PlannedEntry& entry, const CaseSpec& spec) {
  CaseResult r;
  r.id = spec.id;
  r.suite = spec.suite;
  r.params = spec.params;
  r.description = spec.description;
  r.bytes = spec.bytes;
  r.seed = derive_seed(settings.seed, entry.challenge->name() + "/" + spec.id);
  r.reproduce = reproduce_command(settings, entry, spec);
  return r;
}

void run_one_case(const RunSettings& settings, const PlannedEntry& entry, const CaseSpec& spec, Executor& executor,
                  SpeedOfLight& speed_of_light, CaseResult& result) {
  const int64_t start = monotonic_ns();
  try {
    executor.begin_case();
    DeviceInfo device = *entry.device;
    device.peak = speed_of_light.peak(device);
    CaseContext ctx(spec, settings, executor, device, result, entry.challenge->config().ops);
    entry.challenge->run_case(spec, ctx);
    result.verdict = Verdict::pass;
    if (const auto message = speed_of_light.judge(result, *entry.device)) {
      result.verdict = Verdict::impossible_speed;
      result.message = *message;
    }
  } catch (...) {
    const FailureVerdict failure = verdict_of_failure(std::current_exception());
    result.verdict = failure.verdict;
    result.message = failure.message;
    const uint64_t limit = applied_address_space_limit(entry.device->kind == "cuda");
    if (auto out_of_memory = memory_limit_failure(result.verdict, result.message, limit)) {
      result.verdict = Verdict::memory_limit;
      result.message = *out_of_memory;
    }
  }
  settle_verdict(result);
  // These may hold the submission's bytes; the results must stay valid JSON.
  result.message = sanitized_utf8(result.message);
  for (Finding& f : result.other_failures) f.message = sanitized_utf8(f.message);
  result.worker_output = sanitized_utf8(executor.drain_output(kWorkerOutputKept));
  executor.end_case(result.verdict);
  result.seconds = static_cast<double>(monotonic_ns() - start) / 1e9;
}

// A case that cannot run: its build failed, or nothing could build it, or
// the device it needs is missing (its build is then all that was judged).
void not_run(const PlannedEntry& entry, CaseResult& result) {
  if (entry.build.status == "failed") {
    result.verdict = Verdict::build_failed;
    result.message = build_failure_summary(entry.build);
  } else if (entry.build.status != "ok") {
    result.verdict = Verdict::unavailable;
    result.message = entry.build.reason;
  } else {
    result.verdict = Verdict::unavailable;
    result.message = fmt::format("not run: no {} device ({}); the submission built", entry.device->kind,
                                 entry.device->unavailable_reason);
  }
}

}  // namespace

std::string reproduce_command(const RunSettings& settings, const PlannedEntry& entry, const CaseSpec& spec) {
  const bool mutant = is_unranked_role(entry.submission.role);
  return fmt::format("{} run {} -s {} --device {} --case {} --seed {}{}", settings.harness_command,
                     entry.challenge->name(), entry.submission.name, entry.device->kind, spec.id, settings.seed,
                     mutant ? " --with-mutants" : "");
}

void execute_plan(const RunPlan& plan, const RunSettings& settings, RunResults& results, RunObserver& observer,
                  const std::function<void(const RunResults&)>& checkpoint, SpeedOfLight& speed_of_light) {
  ScratchFolder scratch;
  for (const PlannedEntry& entry : plan.entries) {
    observer.entry_started(entry);
    EntryResult entry_result;
    entry_result.challenge = entry.challenge->name();
    entry_result.submission = entry.submission;
    entry_result.device = entry.device->id;
    entry_result.build = entry.build;
    results.entries.push_back(entry_result);
    EntryResult& stored = results.entries.back();

    const bool runnable = entry.control || (entry.build.status == "ok" && entry.device->available);
    std::unique_ptr<Executor> executor;
    if (runnable) executor = make_executor(entry, scratch);
    for (const CaseSpec& spec : entry.cases) {
      observer.case_started(entry, spec);
      CaseResult result = blank_result(settings, entry, spec);
      if (runnable) {
        run_one_case(settings, entry, spec, *executor, speed_of_light, result);
      } else {
        not_run(entry, result);
      }
      stored.cases.push_back(std::move(result));
      observer.case_finished(entry, stored.cases.back());
      // Cases not run take no time: one checkpoint for the entry suffices.
      if (runnable) checkpoint(results);
    }
    if (!runnable) checkpoint(results);
    executor.reset();  // stop the worker before the next entry starts one
    observer.entry_finished(stored);
  }
  for (const auto& [device_id, peak] : speed_of_light.raised()) rederive_bandwidth(results, device_id, peak);
}

}  // namespace harness
