// Runs a process submission (any executable speaking
// docs/PROCESS_PROTOCOL.md over its stdin and stdout). In protocol 1
// tensors travel as .npy files in a scratch folder; in protocol 2 the
// process computes in twins of the harness's buffers that the harness owns
// (harness/device_memory), handed over on a memory socket, copied in as each
// request goes out and out as its reply arrives. Either way outputs end up
// in the shared tensors, so the usual checks apply. Anything off-protocol
// costs the case (error, crash, timeout); the next request starts a fresh
// process.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/challenge_api/executor.h"
#include "harness/definitions/verdict.h"
#include "harness/device_memory/device_memory.h"
#include "harness/executors/device_twins.h"
#include "harness/ipc/line_channel.h"
#include "harness/ipc/memory_socket.h"
#include "harness/ipc/process_log.h"
#include "harness/ipc/worker_process.h"

namespace harness {

struct ProcessTarget {
  std::string challenge;
  int abi_version = 0;
  std::vector<std::string> command;       // resolved: argv[0] an absolute path
  std::string folder;                     // the submission's folder: the working directory
  std::vector<std::string> include_dirs;  // folders its manifest names, which it may read besides its own
  std::string log_path;                   // the process's stderr
  std::string scratch;                    // a folder of its own for tensor files
  nlohmann::json declared_ops = nlohmann::json::array();  // the challenge's "ops", sent in the hello
  int protocol = 1;                                       // 2: tensors in twins of device_memory
  std::shared_ptr<DeviceMemory> device_memory;            // where protocol 2's twins live
  std::string arrays = "numpy";                           // what the process's functions get (the manifest's)
  std::string device_kind = "cpu";                        // "cuda": a GPU process (protocol 2)
  int device_index = 0;
};

// Where a process submission's timed inputs wait until their call: beside
// its scratch folder (the same file system, so a rename moves them), where
// the sandbox lets it neither read nor write.
std::string staging_folder(const ProcessTarget& target);

class ProcessExecutor : public Executor {
 public:
  explicit ProcessExecutor(ProcessTarget target);
  ~ProcessExecutor() override;

  protocol::CallReply call(const std::string& op, const nlohmann::json& scalars, const std::vector<Binding>& tensors,
                           double timeout_s) override;
  protocol::TimeReply time(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<std::vector<Binding>>& sets, const protocol::TimingPolicy& policy,
                           double timeout_s, const FreshInputs& fresh) override;
  void release(const SharedTensor& tensor) override;
  std::string drain_output(size_t max_bytes) override { return log_.drain(max_bytes); }
  // The harness's clock around each request, or, where the process claimed
  // its timed calls' times (witnessed by that clock), the clock it claims by.
  std::string device_clock() const override {
    if (!claimed_timing_) return "process-wall";
    return target_.device_kind == "cuda" ? "cuda-events" : "cpu-monotonic";
  }
  // A GPU process's device memory, from the driver (the twins it opened are
  // the harness's allocations, not counted as its own).
  DeviceMemoryReading device_memory() override;
  std::vector<pid_t> processes() override;
  // What the process and every process of its group hold of their own, and
  // the files they keep in the scratch folder (harness/witness/memory_witness.h),
  // after asking the process to give freed memory back where it offers to;
  // starts the process if none runs.
  std::optional<int64_t> resident_bytes() override;
  std::optional<PeakWindow> open_peak_window() override;
  void end_case(Verdict verdict) override;

 private:
  friend class ProcessTiming;
  void ensure_started();
  // Asks a process that offers it to return its freed memory (malloc_trim).
  void trim();
  // Asks the process to exit, and kills it if it does not within 2 s.
  void stop();
  // Sends a request and returns the process's reply (a JSON object);
  // anything else ends the case.
  nlohmann::json exchange(const nlohmann::json& request, double timeout_s, const std::string& what);
  // Writes the inputs and names the outputs of one request; file names start
  // with `prefix`. The inputs go to the scratch folder, or with `staged` to
  // the staging folder, to be moved there by reveal_inputs().
  nlohmann::json call_request(const std::string& op, const nlohmann::json& scalars, const std::vector<Binding>& tensors,
                              const std::string& prefix, bool staged = false);
  // Moves the staged input files of a request into the scratch folder.
  void reveal_inputs(const std::vector<Binding>& tensors, const std::string& prefix);
  // Deletes the input files of a request from the scratch folder.
  void clear_inputs(const std::vector<Binding>& tensors, const std::string& prefix);
  // The reply's status as a harness_status; throws for a malformed reply.
  int32_t status_of(const nlohmann::json& reply, int64_t id, const std::string& what, std::string* message);
  void read_outputs(const std::vector<Binding>& tensors, const std::string& prefix, const std::string& what);

  // Protocol 2 (process_device_tensors.cpp).
  bool computes_in_twins() const { return target_.protocol == 2; }
  // Twins of the buffers not yet handed to the process, sent on the memory socket.
  void share(const std::vector<Binding>& tensors, const std::string& what);
  // A tensor of a request: its twin, where its data starts in it, dtype and shape.
  nlohmann::json twin_descriptor(const Binding& binding) const;
  // The process's own memory witness leaves the twins out.
  std::set<uint64_t> twin_inodes() const;
  // Drops the process's state of the twins (it is gone).
  void forget_twins();
  [[noreturn]] void lost(Verdict verdict, const std::string& what, const std::string& how);

  ProcessTarget target_;
  ProcessLog log_;
  std::unique_ptr<WorkerProcess> process_;
  std::unique_ptr<LineChannel> channel_;
  std::unique_ptr<MemorySocket> memory_socket_;
  std::optional<DeviceTwins> twins_;
  std::set<uint64_t> shared_;  // buffers whose twins the running process was sent
  std::set<std::string> ops_;
  bool trims_ = false;  // its hello offered to give freed memory back on request
  std::optional<std::string> load_failure_;
  int64_t next_id_ = 1;
  bool claimed_timing_ = false;  // its last timing claimed its calls' times
};

}  // namespace harness
