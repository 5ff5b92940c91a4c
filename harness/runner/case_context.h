// The primitives a challenge's case driver uses, and the one place where
// every anti-cheating check happens: guard bands, poisoned outputs, inputs
// compared with a pristine copy, statuses, timing over rotating input sets.
// A driver allocates tensors, fills inputs, calls ops and checks values;
// everything else is done here, identically for every challenge.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "harness/device/device_info.h"
#include "harness/results/results.h"
#include "harness/runner/case_spec.h"
#include "harness/runner/executor.h"
#include "harness/runner/run_settings.h"

namespace harness {

class CaseContext {
 public:
  CaseContext(const CaseSpec& spec, const RunSettings& settings, Executor& executor,
              const DeviceInfo& device, CaseResult& result);
  ~CaseContext();
  CaseContext(const CaseContext&) = delete;
  CaseContext& operator=(const CaseContext&) = delete;

  const CaseSpec& spec() const { return spec_; }
  const RunSettings& settings() const { return settings_; }
  const DeviceInfo& device() const { return device_; }
  // Seed of input set `set` of this case (set 0 and 1 are the checked calls).
  uint64_t input_seed(size_t set) const;
  // True for perf cases: drivers then call time() after their checked calls.
  bool timing_wanted() const { return spec_.suite == Suite::perf; }
  // How many input sets to rotate through so that together they exceed
  // twice the device's cache (at least 2, at most 64).
  size_t timing_sets(double bytes_per_set) const;

  // A new tensor in shared memory, released with the context.
  SharedTensor& tensor(TensorSpec spec);

  // One checked call: guards set, outputs poisoned, inputs snapshotted; after
  // the call the status, guards, inputs and poison are checked, in that
  // order, and the first problem ends the case with its verdict.
  //
  // A status in `tolerated` (e.g. HARNESS_STATUS_OUT_OF_MEMORY where the
  // workload expects a refusal) is returned instead of ending the case; the
  // guards and inputs are still checked, outputs are not.
  protocol::CallReply call(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<Binding>& bindings, const std::vector<int32_t>& tolerated = {});

  // The byte model of this case when it depends on what the submission
  // declared (a cache's storage format); used for the bandwidth of time().
  void set_bytes_moved(double bytes) { bytes_moved_ = bytes; result_.bytes_moved = bytes; }

  // Timed calls rotating through `sets`, with the same checks on every set
  // afterwards. Records the timing, bandwidth and peak fraction in the
  // case's result. The driver still checks the values of every set.
  const TimingResult& time(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<std::vector<Binding>>& sets);

  nlohmann::json& metrics() { return result_.metrics; }
  [[noreturn]] void fail(Verdict verdict, const std::string& message) const;

 private:
  struct Snapshot {
    const SharedTensor* tensor;
    std::vector<unsigned char> bytes;
  };
  void prepare(const std::vector<Binding>& bindings, std::vector<Snapshot>& snapshots);
  void check_status(int32_t status, const std::string& message, const std::string& op) const;
  void check_integrity(const std::vector<Binding>& bindings, const std::vector<Snapshot>& snapshots,
                       const std::string& when, bool require_written = true) const;
  uint64_t guard_seed() const;

  const CaseSpec& spec_;
  const RunSettings& settings_;
  Executor& executor_;
  const DeviceInfo& device_;
  CaseResult& result_;
  double bytes_moved_;
  std::vector<std::unique_ptr<SharedTensor>> tensors_;
};

}  // namespace harness
