// CaseContext's memory witnesses: the worker's resident memory and, on a
// GPU, its device memory from the driver, against what it claims.
#include <algorithm>

#include "harness/challenge_api/case_context.h"
#include "harness/core/error.h"
#include "harness/witness/memory_witness.h"
#include "harness/witness/witness_parts.h"

namespace harness {

CaseContext::MemoryBaseline CaseContext::memory_baseline() {
  MemoryBaseline baseline;
  baseline.resident = executor_.resident_bytes();  // starts the worker if none runs
  // From before the library loaded where the worker was started for this
  // case (a CPU worker always is): what its constructors, an earlier call
  // of this case or the query of a saved state's size left behind counts.
  if (const std::optional<int64_t> before_load = executor_.resident_before_load(); baseline.resident && before_load) {
    baseline.resident = before_load;
  }
  const DeviceMemoryReading device = executor_.device_memory();
  // The submission's part alone: the harness's tensors mapped now may be
  // gone or joined by others at the reading.
  if (device.bytes) baseline.device = *device.bytes - device.harness_tensors;
  if (!device.bytes && device_.kind == "cuda") result_.metrics["device_memory_witness"] = "none: " + device.why_not;
  return baseline;
}

int64_t CaseContext::witness_device_memory(const std::string& what, int64_t claimed, int64_t may_hold,
                                           const MemoryBaseline& baseline) {
  if (!baseline.device) return 0;
  const DeviceMemoryReading now = executor_.device_memory();
  if (!now.bytes) {
    result_.metrics["device_memory_witness"] = "none: " + now.why_not;
    return 0;
  }
  const MemoryJudgement j = judge_device_memory(may_hold, *baseline.device, *now.bytes, now.harness_tensors);
  auto& witnessed = result_.metrics["witnessed_device_memory_bytes"];
  if (!witnessed.is_number() || witnessed.get<int64_t>() < j.witnessed) {
    witnessed = j.witnessed;
    result_.metrics["device_memory_harness_tensors_bytes"] = now.harness_tensors;
  }
  auto& allowed = result_.metrics["device_memory_allowed_bytes"];
  if (!allowed.is_number() || allowed.get<int64_t>() < j.allowed) allowed = j.allowed;
  if (j.understated && !witness_part_disabled("device-memory-verdict")) {
    note_failure(Verdict::understated_memory, fmt::format("{}: {}", what, j.message));
  }
  // What the score may take the claim as at least: the growth less what the
  // contract lets a GPU hold beyond the claim and the device's allowance.
  return std::max<int64_t>(0, j.witnessed - (may_hold - claimed) - kDeviceMemoryAllowanceBytes);
}

int64_t CaseContext::witness_memory(const std::string& what, int64_t claimed, const MemoryBaseline& baseline,
                                    int64_t device_claimed) {
  // Only a GPU worker has a device reading.
  const int64_t device_floor = witness_device_memory(what, claimed, std::max(claimed, device_claimed), baseline);
  if (!baseline.resident) return device_floor;
  const std::optional<int64_t> now = executor_.resident_bytes();
  if (!now) return device_floor;
  const bool gpu = device_.kind == "cuda";
  // A GPU worker's host memory is judged against the same claim, with its
  // runtime's allowance in place of the CPU's: a store kept there (pinned
  // or pageable) is memory the submission holds as much as one on the device.
  const int64_t allowance = gpu ? kGpuHostMemoryAllowanceBytes : kMemoryAllowanceBytes;
  const MemoryJudgement j = judge_memory(claimed, *baseline.resident, *now, allowance);
  auto& witnessed = result_.metrics[gpu ? "witnessed_host_memory_bytes" : "witnessed_memory_bytes"];
  if (!witnessed.is_number() || witnessed.get<int64_t>() < j.witnessed) witnessed = j.witnessed;
  if (j.understated && !(gpu && witness_part_disabled("gpu-host-memory-verdict"))) {
    note_failure(Verdict::understated_memory, fmt::format("{}: {}", what, j.message));
  }
  return device_floor + std::max<int64_t>(0, j.witnessed - allowance);
}

void CaseContext::open_peak_window() { peak_window_ = executor_.open_peak_window(); }

void CaseContext::close_peak_window(const std::string& metric, int64_t tensor_bytes) {
  if (!peak_window_) return;
  const std::optional<int64_t> growth = peak_growth(*peak_window_, tensor_bytes);
  peak_window_.reset();
  if (!growth) return;
  auto& recorded = result_.metrics[metric];
  if (!recorded.is_number() || recorded.get<int64_t>() < *growth) recorded = *growth;
}

}  // namespace harness
