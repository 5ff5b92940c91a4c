#include "harness/runner/runner.h"

#include <unistd.h>

#include <filesystem>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/core/rng.h"
#include "harness/runner/case_context.h"
#include "harness/runner/control_executor.h"
#include "harness/runner/process_executor.h"
#include "harness/runner/worker_executor.h"

namespace harness {

namespace {

constexpr size_t kWorkerOutputKept = 2000;

std::string worker_executable() {
  const std::string beside = executable_dir() + "/harness-worker";
  if (file_exists(beside)) return beside;
  return std::string(HARNESS_BUILD_DIR) + "/harness-worker";
}

// A folder for the worker logs of this run, removed at the end.
class ScratchFolder {
 public:
  ScratchFolder() {
    path_ = std::filesystem::temp_directory_path() / fmt::format("harness-run-{}", ::getpid());
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
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
    target.log_path = scratch.file(stem + ".log");
    target.scratch = scratch.file(stem + ".tensors");
    return std::make_unique<ProcessExecutor>(std::move(target));
  }
  WorkerTarget target;
  target.challenge = entry.challenge->name();
  target.library = entry.library;
  target.device_kind = entry.device->kind;
  target.device_index = entry.device->index;
  target.worker_executable = worker_executable();
  target.log_path = scratch.file(stem + ".log");
  return std::make_unique<WorkerExecutor>(std::move(target));
}

CaseResult blank_result(const RunSettings& settings, const PlannedEntry& entry, const CaseSpec& spec) {
  CaseResult r;
  r.id = spec.id;
  r.suite = spec.suite;
  r.params = spec.params;
  r.description = spec.description;
  r.bytes_moved = spec.bytes_moved;
  r.seed = derive_seed(settings.seed, entry.challenge->name() + "/" + spec.id);
  r.reproduce = reproduce_command(settings, entry, spec);
  return r;
}

void run_one_case(const RunSettings& settings, const PlannedEntry& entry, const CaseSpec& spec, Executor& executor,
                  CaseResult& result) {
  const int64_t start = monotonic_ns();
  try {
    CaseContext ctx(spec, settings, executor, *entry.device, result);
    entry.challenge->run_case(spec, ctx);
    result.verdict = Verdict::pass;
    // Speed of light: a correct answer faster than the byte model allows at
    // the measured ceiling cannot be real (skipped work, a cached answer).
    // Only meaningful when the rotating input sets really missed the cache.
    const auto& peak = entry.device->peak;
    if (result.bandwidth && peak && result.timing && result.timing->cache_cold &&
        *result.bandwidth > peak->ceiling_bytes_per_second()) {
      result.verdict = Verdict::impossible_speed;
      result.message = fmt::format(
          "{:.1f} GB/s is beyond this device's ceiling of {:.1f} GB/s (measured peak plus 10%): {} bytes in {:.1f} us",
          *result.bandwidth / 1e9, peak->ceiling_bytes_per_second() / 1e9, result.bytes_moved,
          result.timing->scored_median_ns() / 1e3);
    }
  } catch (const VerdictException& v) {
    result.verdict = v.verdict();
    result.message = v.message();
  } catch (const std::exception& e) {
    result.verdict = Verdict::harness_error;
    result.message = fmt::format("the harness failed on this case: {}", e.what());
  }
  result.worker_output = executor.drain_output(kWorkerOutputKept);
  result.seconds = static_cast<double>(monotonic_ns() - start) / 1e9;
}

}  // namespace

std::string reproduce_command(const RunSettings& settings, const PlannedEntry& entry, const CaseSpec& spec) {
  const bool mutant = is_unranked_role(entry.submission.role);
  return fmt::format("{} run {} -s {} --device {} --case {} --seed {}{}", settings.harness_command,
                     entry.challenge->name(), entry.submission.name, entry.device->kind, spec.id, settings.seed,
                     mutant ? " --with-mutants" : "");
}

void execute_plan(const RunPlan& plan, const RunSettings& settings, RunResults& results, RunObserver& observer,
                  const std::function<void(const RunResults&)>& checkpoint) {
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

    const bool runnable = entry.control || entry.build.status == "ok";
    std::unique_ptr<Executor> executor;
    if (runnable) executor = make_executor(entry, scratch);
    for (const CaseSpec& spec : entry.cases) {
      observer.case_started(entry, spec);
      CaseResult result = blank_result(settings, entry, spec);
      if (runnable) {
        run_one_case(settings, entry, spec, *executor, result);
      } else {
        result.verdict = entry.build.status == "unavailable" ? Verdict::unavailable : Verdict::build_failed;
        result.message = entry.build.reason;
      }
      stored.cases.push_back(std::move(result));
      observer.case_finished(entry, stored.cases.back());
      checkpoint(results);
    }
    executor.reset();  // stop the worker before the next entry starts one
    observer.entry_finished(stored);
  }
}

}  // namespace harness
