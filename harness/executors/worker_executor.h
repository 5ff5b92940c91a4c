// Runs a compiled submission in a harness-worker process. A crash, a hang
// or a poisoned CUDA context costs the case in progress (VerdictException
// crash / timeout); the next request starts a fresh worker.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "harness/challenge_api/executor.h"
#include "harness/definitions/verdict.h"
#include "harness/device_memory/device_memory.h"
#include "harness/executors/device_twins.h"
#include "harness/ipc/process_log.h"
#include "harness/ipc/worker_process.h"
#include "harness/sanitize/compute_sanitizer.h"

namespace harness {

struct WorkerTarget {
  std::string challenge;
  std::string library;      // the submission's shared library
  std::string device_kind;  // "cpu" | "cuda"
  int device_index = 0;
  std::string worker_executable;
  std::string log_path;  // the worker's stdout and stderr
  // Timed requests hold the calls alone, the sets' copies to the device and
  // back in requests of their own (TimingBatch::staged): a GPU worker's,
  // unless HARNESS_WITNESS_DISABLE=gpu-staging. A CPU worker copies nothing.
  bool stage_copies = false;
  // Set: the harness owns the device twin of every buffer the worker binds
  // (harness/device_memory), copies into it before each request and out of
  // it at each reply, and the worker computes in the twin alone. Unset: the
  // worker works in the shared buffers (CPU) or in device copies of its own
  // (GPU).
  std::shared_ptr<DeviceMemory> device_memory;
  // harness run --sanitize: the worker runs under compute-sanitizer, a
  // worker per case, its report in a file beside the log.
  std::optional<SanitizerSetting> sanitizer;
};

class WorkerExecutor : public Executor {
 public:
  explicit WorkerExecutor(WorkerTarget target);
  ~WorkerExecutor() override;

  protocol::CallReply call(const std::string& op, const nlohmann::json& scalars, const std::vector<Binding>& tensors,
                           double timeout_s) override;
  protocol::TimeReply time(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<std::vector<Binding>>& sets, const protocol::TimingPolicy& policy,
                           double timeout_s, const FreshInputs& fresh) override;
  void release(const SharedTensor& tensor) override;
  std::string drain_output(size_t max_bytes) override;
  std::string device_clock() const override;
  // What the worker holds of its own in host memory
  // (resident_private_bytes), starting one if none runs; judged, a CUDA
  // worker's with its runtime's allowance (CaseContext::witness_memory).
  std::optional<int64_t> resident_bytes() override;
  std::optional<int64_t> resident_before_load() override;
  std::optional<PeakWindow> open_peak_window() override;
  // A CPU worker stops: the next request starts a fresh one. A CUDA worker
  // is kept while cases pass (end_case), since a new CUDA context per case
  // costs far more than a process.
  void begin_case() override;
  void end_case(Verdict verdict) override;
  DeviceMemoryReading device_memory() override;
  std::vector<pid_t> processes() override;
  // Under a sanitizer: ends the worker, so that the sanitizer writes its
  // report, and returns the report's first error as a finding.
  std::vector<Finding> sanitizer_findings() override;

  // Number of worker processes started so far (tests check restarts).
  int starts() const { return starts_; }

 private:
  friend class BatchedTiming;
  // Starts the worker if none runs; loading may take at most timeout_s.
  void ensure_started(double timeout_s);
  // Asks the worker to exit, and kills it if it does not within 2 s.
  void stop();
  // The first message of a starting worker, which may end the case.
  std::optional<Channel::Message> receive_at_start(double timeout_s, const std::string& stage);
  void map(const std::vector<Binding>& tensors, const std::string& what);
  bool harness_owns_device_memory() const { return twins_.has_value(); }
  // The harness's own copies between its buffers and their device twins
  // (harness-owned device memory only), of every buffer of `ids`; the copy
  // out checks the twins' margins (DeviceTwins::copy_out).
  void copy_twins(const std::set<uint64_t>& ids, bool to_device);
  nlohmann::json request(const nlohmann::json& message, int fd, double timeout_s, const std::string& what);
  // Turns a reply's fault into the verdict it costs.
  void raise_fault(const std::optional<protocol::Fault>& fault, const std::string& what);
  // A reply that is not the protocol: the worker is killed, the case is an error.
  [[noreturn]] void malformed(const std::string& what, const nlohmann::json& body, const std::string& problem);
  template <class Reply>
  Reply decode(const nlohmann::json& body, const std::string& what);
  [[noreturn]] void worker_lost(Verdict verdict, const std::string& what, const std::string& how);
  WorkerTarget target_;
  ProcessLog log_;
  std::unique_ptr<WorkerProcess> process_;
  struct Mapped {
    uint64_t inode = 0;  // of its file: the memory witness leaves those out
    uint64_t bytes = 0;  // the whole buffer, guard bands included: a GPU worker's device copy is as large
  };
  std::map<uint64_t, Mapped> mapped_;  // by buffer id
  // Harness-owned device memory: the twins of the mapped buffers; they go
  // with the worker that opened them (every request copies whole buffers
  // in again).
  std::optional<DeviceTwins> twins_;
  // A load that fails (an error, a hang) fails the same way every time.
  std::optional<std::pair<Verdict, std::string>> load_failure_;
  int starts_ = 0;
  // The report file of the sanitizer running the current worker.
  std::string sanitizer_report_;
  // resident_private_bytes of the running CPU worker before its library loaded.
  std::optional<int64_t> before_load_;
};

nlohmann::json bindings_to_json(const std::vector<Binding>& tensors);

}  // namespace harness
