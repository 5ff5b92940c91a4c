#include "harness/runner/runner.h"

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

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

std::unique_ptr<Executor> make_executor(const RunSettings& settings, const PlannedEntry& entry,
                                        const ScratchFolder& scratch) {
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
    target.protocol = entry.process_protocol;
    target.arrays = entry.process_arrays;
    target.device_kind = entry.device->kind;
    target.device_index = entry.device->index;
    // Protocol 2 computes in the harness's twins: the stand-in device's on
    // the CPU, its own CUDA context's on a GPU.
    if (target.protocol == 2) {
      target.device_memory =
          target.device_kind == "cuda" ? make_cuda_device_memory(target.device_index) : make_stand_in_device_memory();
    }
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
  const DeviceMemoryChoice memory = device_memory_choice();
  if (target.device_kind == "cpu" && memory == DeviceMemoryChoice::stand_in) {
    target.device_memory = make_stand_in_device_memory();
  } else if (target.device_kind == "cuda" && memory == DeviceMemoryChoice::harness) {
    target.device_memory = make_cuda_device_memory(target.device_index);
  }
  if (target.device_kind == "cuda") target.sanitizer = settings.sanitizer;
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
    ctx.release_tensors();
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
  for (Finding& found : executor.sanitizer_findings()) result.other_failures.push_back(std::move(found));
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
  // A case judged in memory of another owner reproduces only there.
  const std::string memory = device_memory_option(device_memory_choice());
  const bool sanitized = settings.sanitizer && entry.device->kind == "cuda";
  return fmt::format("{}{} run {} -s {} --device {} --case {} --seed {}{}{}",
                     memory.empty() ? "" : "HARNESS_DEVICE_MEMORY=" + memory + " ", settings.harness_command,
                     entry.challenge->name(), entry.submission.name, entry.device->kind, spec.id, settings.seed,
                     mutant ? " --with-mutants" : "", sanitized ? " --sanitize=" + settings.sanitizer->tool : "");
}

namespace {

// A case that must run with nothing else on the machine: every timed case,
// and every case on a GPU (one device, one worker at a time).
bool runs_alone(const PlannedEntry& entry, const CaseSpec& spec) {
  return spec.suite == Suite::perf || entry.device->kind != "cpu";
}

// Untimed cases of several entries at once, at most this many, and never
// more than the machine's cores: each entry's own worker, each case as
// alone as before; only waiting for other entries' untimed cases goes.
constexpr size_t kMaxLanes = 4;

size_t lane_count() {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::min(kMaxLanes, cores);
}

// One run of a plan: untimed cases of different entries side by side, then
// every case that runs alone, one after another. The results of each entry
// stay in the plan's order and each entry's cases in its own; the
// observer, the results and the checkpoints are touched under one lock.
class PlanExecution {
 public:
  PlanExecution(const RunPlan& plan, const RunSettings& settings, RunResults& results, RunObserver& observer,
                const std::function<void(const RunResults&)>& checkpoint, SpeedOfLight& speed_of_light)
      : plan_(plan),
        settings_(settings),
        results_(results),
        observer_(observer),
        checkpoint_(checkpoint),
        speed_of_light_(speed_of_light),
        first_slot_(results.entries.size()),
        slot_of_(plan.entries.size(), kNotStarted),
        positions_(plan.entries.size()) {}

  void run() {
    std::vector<std::thread> lanes;
    for (size_t l = 1; l < lane_count(); ++l) lanes.emplace_back([this] { run_lane(); });
    run_lane();
    for (std::thread& lane : lanes) lane.join();
    if (lane_failure_) std::rethrow_exception(lane_failure_);
    for (size_t e = 0; e < plan_.entries.size(); ++e) {
      if (plan_.entries[e].cases.empty()) {
        start_entry(e);
        checkpoint_(results_);
      }
      run_cases(e, [&](const CaseSpec& spec) { return runs_alone(plan_.entries[e], spec); });
      finish_entry(e);
    }
    put_entries_in_plan_order();
    for (const auto& [device_id, peak] : speed_of_light_.raised()) rederive_bandwidth(results_, device_id, peak);
  }

 private:
  static constexpr size_t kNotStarted = static_cast<size_t>(-1);

  // Takes entries in plan order and runs their cases that need not run alone.
  void run_lane() {
    for (;;) {
      size_t e = 0;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (next_entry_ == plan_.entries.size()) return;
        e = next_entry_++;
      }
      try {
        run_cases(e, [&](const CaseSpec& spec) { return !runs_alone(plan_.entries[e], spec); });
      } catch (...) {
        // Only the harness's own failures get here (a case's become its
        // verdict): the first ends the run once the lanes are joined.
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!lane_failure_) lane_failure_ = std::current_exception();
        next_entry_ = plan_.entries.size();
      }
    }
  }

  void run_cases(size_t e, const std::function<bool(const CaseSpec&)>& wanted) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (lane_failure_) std::rethrow_exception(lane_failure_);
    }
    const PlannedEntry& entry = plan_.entries[e];
    std::vector<size_t> indices;
    for (size_t i = 0; i < entry.cases.size(); ++i) {
      if (wanted(entry.cases[i])) indices.push_back(i);
    }
    if (indices.empty()) return;
    start_entry(e);
    const bool runnable = entry.control || (entry.build.status == "ok" && entry.device->available);
    std::unique_ptr<Executor> executor;
    if (runnable) executor = make_executor(settings_, entry, scratch_);
    for (const size_t i : indices) {
      const CaseSpec& spec = entry.cases[i];
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        observer_.case_started(entry, spec);
      }
      CaseResult result = blank_result(settings_, entry, spec);
      if (runnable) {
        run_one_case(settings_, entry, spec, *executor, speed_of_light_, result);
      } else {
        not_run(entry, result);
      }
      const std::lock_guard<std::mutex> lock(mutex_);
      EntryResult& stored = results_.entries[slot_of_[e]];
      stored.cases.push_back(std::move(result));
      positions_[e].push_back(i);
      observer_.case_finished(entry, stored.cases.back());
      // Cases not run take no time: one checkpoint for the entry suffices.
      if (runnable || i == indices.back()) checkpoint_(results_);
    }
    executor.reset();  // stop the worker before its lane starts another
  }

  void start_entry(size_t e) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (slot_of_[e] != kNotStarted) return;
    const PlannedEntry& entry = plan_.entries[e];
    observer_.entry_started(entry);
    EntryResult started;
    started.challenge = entry.challenge->name();
    started.submission = entry.submission;
    started.device = entry.device->id;
    started.build = entry.build;
    slot_of_[e] = results_.entries.size();
    results_.entries.push_back(std::move(started));
  }

  // The entry's cases back in its own order, once all of them ran.
  void finish_entry(size_t e) {
    if (slot_of_[e] == kNotStarted) return;
    EntryResult& stored = results_.entries[slot_of_[e]];
    std::vector<size_t> order(stored.cases.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return positions_[e][a] < positions_[e][b]; });
    std::vector<CaseResult> sorted;
    for (const size_t k : order) sorted.push_back(std::move(stored.cases[k]));
    stored.cases = std::move(sorted);
    observer_.entry_finished(stored);
  }

  void put_entries_in_plan_order() {
    std::vector<EntryResult> ordered;
    for (size_t e = 0; e < plan_.entries.size(); ++e) {
      if (slot_of_[e] != kNotStarted) ordered.push_back(std::move(results_.entries[slot_of_[e]]));
    }
    results_.entries.resize(first_slot_);
    for (EntryResult& entry : ordered) results_.entries.push_back(std::move(entry));
  }

  const RunPlan& plan_;
  const RunSettings& settings_;
  RunResults& results_;
  RunObserver& observer_;
  const std::function<void(const RunResults&)>& checkpoint_;
  SpeedOfLight& speed_of_light_;
  ScratchFolder scratch_;
  std::mutex mutex_;
  size_t next_entry_ = 0;
  std::exception_ptr lane_failure_;
  const size_t first_slot_;
  std::vector<size_t> slot_of_;                 // plan index -> index in results.entries
  std::vector<std::vector<size_t>> positions_;  // each stored case's index in its entry's cases
};

}  // namespace

void execute_plan(const RunPlan& plan, const RunSettings& settings, RunResults& results, RunObserver& observer,
                  const std::function<void(const RunResults&)>& checkpoint, SpeedOfLight& speed_of_light) {
  PlanExecution(plan, settings, results, observer, checkpoint, speed_of_light).run();
}

}  // namespace harness
