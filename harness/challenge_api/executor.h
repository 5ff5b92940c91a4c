// Runs a submission's ops on behalf of the harness: in an isolated worker
// process (WorkerExecutor) or, for the built-in negative controls, in
// process (ControlExecutor). One interface, so the same evaluation loop and
// the same checks serve both.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/definitions/verdict.h"
#include "harness/ipc/protocol.h"
#include "harness/memory/shared_tensor.h"
#include "harness/results/results.h"
#include "harness/witness/device_memory.h"
#include "harness/witness/peak_memory.h"

namespace harness {

struct Binding {
  SharedTensor* tensor = nullptr;
  protocol::Access access = protocol::Access::in;
};

// Checks the round just timed and gives every input set new inputs, never
// given before, so remembered answers have nothing to match. An executor
// given one calls the sets in whole rounds (each set once, in order), calls
// it right before every round's request but the first's (input_stage.h), and
// ends after a whole round, so each set's outputs answer its current inputs.
// Empty: the sets keep their inputs.
using FreshInputs = std::function<void()>;

class Executor {
 public:
  virtual ~Executor() = default;
  // Throws VerdictException for what costs the case (crash, timeout, a
  // fault while calling); returns the submission's status otherwise.
  virtual protocol::CallReply call(const std::string& op, const nlohmann::json& scalars,
                                   const std::vector<Binding>& tensors, double timeout_s) = 0;
  virtual protocol::TimeReply time(const std::string& op, const nlohmann::json& scalars,
                                   const std::vector<std::vector<Binding>>& sets, const protocol::TimingPolicy& policy,
                                   double timeout_s, const FreshInputs& fresh) = 0;
  // The tensor is going away: forget any mapping of it.
  virtual void release(const SharedTensor& tensor) = 0;
  // What the submission printed since the last drain (its tail, at most max_bytes).
  virtual std::string drain_output(size_t max_bytes) = 0;
  // The clock a time() reply's device_ns come from ("cpu-monotonic" or "cuda-events").
  virtual std::string device_clock() const = 0;
  // What the submission's process holds of its own in resident memory now,
  // read by the harness (harness/witness/memory_witness.h); nullopt where
  // there is no such witness (in-process controls, a device's memory).
  virtual std::optional<int64_t> resident_bytes() { return std::nullopt; }
  // The same, read before the submission's library was loaded into the
  // process now running (before its constructors ran), where that process
  // was started for the case in progress; nullopt otherwise.
  virtual std::optional<int64_t> resident_before_load() { return std::nullopt; }
  // Opens the peak memory witness's window (harness/witness/peak_memory.h)
  // on the submission's process, after returning freed memory, for the next
  // call; nullopt where there is no such witness (in-process controls, a
  // GPU worker, a sanitizer's build).
  virtual std::optional<PeakWindow> open_peak_window() { return std::nullopt; }
  // Called as each case begins. A CPU worker stops here, so that every case
  // runs in a process of its own: no memory and no state of the submission
  // carries over from an earlier case, and the memory witness counts from
  // before the library loaded (resident_before_load).
  virtual void begin_case() {}
  // Called as each case ends, with its verdict. A worker kept across cases
  // (a CUDA worker, a process submission) stops after a case that did not
  // pass: what the failed case left would sit behind the next case's memory
  // baseline and change its verdict in a way its printed command, run alone,
  // does not reproduce.
  virtual void end_case(Verdict) {}
  // What a sanitizer the submission ran under (harness run --sanitize)
  // reported during the case; asking may end the worker. Empty otherwise.
  virtual std::vector<Finding> sanitizer_findings() { return {}; }
  // What the submission's worker holds on its GPU now, read by the harness
  // from the driver (harness/witness/device_memory.h); no reading, and why,
  // where there is none.
  virtual DeviceMemoryReading device_memory() { return {std::nullopt, "not a GPU worker"}; }
  // The processes running the submission's code now (its worker's process
  // group), whose CPU time is the case's own, not the machine's other load
  // (harness/witness/machine_load.h); none for an in-process control.
  virtual std::vector<pid_t> processes() { return {}; }
};

}  // namespace harness
