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

#include "harness/ipc/process_log.h"
#include "harness/ipc/worker_process.h"
#include "harness/runner/executor.h"
#include "harness/runner/verdict.h"

namespace harness {

struct WorkerTarget {
  std::string challenge;
  std::string library;        // the submission's shared library
  std::string device_kind;    // "cpu" | "cuda"
  int device_index = 0;
  std::string worker_executable;
  std::string log_path;       // the worker's stdout and stderr
};

class WorkerExecutor : public Executor {
 public:
  explicit WorkerExecutor(WorkerTarget target);
  ~WorkerExecutor() override;

  protocol::CallReply call(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<Binding>& tensors, double timeout_s) override;
  protocol::TimeReply time(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<std::vector<Binding>>& sets,
                           const protocol::TimingPolicy& policy, double timeout_s,
                           const FreshInputs& fresh) override;
  void release(const SharedTensor& tensor) override;
  std::string drain_output(size_t max_bytes) override;
  std::string device_clock() const override;
  // The worker's RssAnon on the CPU; nullopt for a CUDA worker, whose
  // memory of interest is on the device, and while no worker runs.
  std::optional<int64_t> resident_bytes() override;
  DeviceMemoryReading device_memory() override;

  // Number of worker processes started so far (tests check restarts).
  int starts() const { return starts_; }

 private:
  // Starts the worker if none runs; loading may take at most timeout_s.
  void ensure_started(double timeout_s);
  void map(const std::vector<Binding>& tensors, const std::string& what);
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
  std::map<uint64_t, uint64_t> mapped_;  // buffer id -> its file's inode (the memory witness leaves those out)
  // A load that fails (an error, a hang) fails the same way every time.
  std::optional<std::pair<Verdict, std::string>> load_failure_;
  int starts_ = 0;
};

nlohmann::json bindings_to_json(const std::vector<Binding>& tensors);

}  // namespace harness
