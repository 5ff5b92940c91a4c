#include "harness/challenge_api/case_context.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness/core/stats.h"
#include "harness/witness/memory_witness.h"
#include "harness/witness/timing_witness.h"
#include "harness/witness/witness_parts.h"
#include "harness_abi.h"

namespace harness {

namespace {

std::atomic<uint64_t> next_tensor_id{1};

// The timing witness's stated overheads (harness/witness/timing_witness.h).
// Between two calls the worker re-poisons the outputs: allowed at twice what
// the same poisoning takes here, plus the loop's clock reads and its running
// median. One request: witness_per_request_ns; its copies:
// witness_max_copy_ns; a staged round's upload and download:
// witness_max_staging_ns.
constexpr double kWitnessPoisonFactor = 2.0;
constexpr double kWitnessPerCallNs = 10e3;

std::string status_name(int32_t status) {
  switch (status) {
    case HARNESS_STATUS_OK: return "OK";
    case HARNESS_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case HARNESS_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case HARNESS_STATUS_ERROR: return "ERROR";
    case HARNESS_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    default: return "not a harness_status";
  }
}

}  // namespace

CaseContext::CaseContext(const CaseSpec& spec, const RunSettings& settings, Executor& executor,
                         const DeviceInfo& device, CaseResult& result)
    : spec_(spec),
      settings_(settings),
      executor_(executor),
      device_(device),
      result_(result),
      bytes_(spec.bytes) {}

CaseContext::~CaseContext() {
  for (const auto& t : tensors_) {
    try {
      executor_.release(*t);
    } catch (...) {
      // A worker that died cannot unmap; its buffers went with it.
    }
  }
}

bool judged_cold(double set_bytes, size_t sets, const ByteModel& bytes, uint64_t cache_bytes) {
  const double twice_cache = 2.0 * static_cast<double>(cache_bytes);
  return set_bytes * static_cast<double>(sets) >= twice_cache || bytes.total() >= twice_cache;
}

uint64_t CaseContext::input_seed(size_t set) const { return derive_seed(result_.seed, set); }

size_t CaseContext::secret_index(size_t n) {
  HARNESS_CHECK(n > 0, "a secret index below 0");
  return static_cast<size_t>(secret().below(n));
}

uint64_t CaseContext::secret_seed() { return secret().next_u64(); }

Rng& CaseContext::secret() {
  if (!secret_) secret_.emplace((uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());
  return *secret_;
}

uint64_t CaseContext::guard_seed() const { return derive_seed(result_.seed, "guard-bands"); }

size_t CaseContext::timing_sets(double bytes_per_set) const {
  const double cache = std::max<double>(static_cast<double>(device_.cache_bytes), 1 << 20);
  const double wanted = std::ceil(2.0 * cache / std::max(bytes_per_set, 1.0));
  return static_cast<size_t>(std::clamp(wanted, 2.0, 64.0));
}

SharedTensor& CaseContext::tensor(TensorSpec spec) {
  tensors_.push_back(std::make_unique<SharedTensor>(next_tensor_id++, std::move(spec)));
  return *tensors_.back();
}

void CaseContext::fail(Verdict verdict, const std::string& message) const {
  throw VerdictException(verdict, message);
}

void CaseContext::guard_and_poison(const std::vector<Binding>& bindings) {
  for (const Binding& b : bindings) {
    HARNESS_CHECK(b.tensor != nullptr, "a binding of op arguments has no tensor");
    b.tensor->buffer().fill_guards(guard_seed());
    if (protocol::is_written(b.access)) fill_poison(b.tensor->raw(), b.tensor->elements(), b.tensor->spec().dtype);
  }
}

void CaseContext::prepare(const std::vector<Binding>& bindings, std::vector<Snapshot>& snapshots) {
  guard_and_poison(bindings);
  for (const Binding& b : bindings) {
    if (protocol::is_written(b.access)) continue;
    const auto* bytes = static_cast<const unsigned char*>(b.tensor->raw());
    snapshots.push_back(Snapshot{b.tensor, std::vector<unsigned char>(bytes, bytes + b.tensor->bytes())});
  }
}

void CaseContext::check_status(int32_t status, const std::string& message, const std::string& op) const {
  if (status == HARNESS_STATUS_OK) return;
  const std::string text = message.empty() ? "(no message)" : message;
  if (status == HARNESS_STATUS_UNSUPPORTED) fail(Verdict::unsupported, fmt::format("{}: {}", op, text));
  fail(Verdict::error, fmt::format("{} returned status {} ({}): {}", op, status, status_name(status), text));
}

void CaseContext::check_integrity(const std::vector<Binding>& bindings, const std::vector<Snapshot>& snapshots,
                                  const std::string& when, bool require_written) const {
  for (const Binding& b : bindings) {
    const auto damage = b.tensor->buffer().check_guards(guard_seed());
    if (damage.damaged) {
      fail(Verdict::out_of_bounds_write,
           fmt::format("{}: {} bytes written outside {} ({}); the nearest {} bytes {} its {}",
                       when, damage.bytes_changed, b.tensor->spec().name, b.tensor->spec().describe(),
                       damage.distance, damage.before ? "before" : "after", damage.before ? "start" : "end"));
    }
  }
  for (const Snapshot& s : snapshots) {
    const auto& spec = s.tensor->spec();
    const size_t element = dtype_size(spec.dtype);
    const auto* now = static_cast<const unsigned char*>(s.tensor->raw());
    if (std::memcmp(now, s.bytes.data(), s.bytes.size()) == 0) continue;
    size_t changed = 0;
    size_t first = 0;
    for (size_t i = 0; i < spec.elements(); ++i) {
      if (std::memcmp(now + i * element, s.bytes.data() + i * element, element) != 0) {
        if (changed++ == 0) first = i;
      }
    }
    fail(Verdict::input_modified,
         fmt::format("{}: input {} was modified: {} of {} elements changed; first at {}: {} became {}", when,
                     spec.name, changed, spec.elements(), format_index(first, spec.shape),
                     format_element(s.bytes.data(), first, spec.dtype), format_element(now, first, spec.dtype)));
  }
  for (const Binding& b : bindings) {
    if (!require_written || b.access != protocol::Access::out) continue;
    const auto& spec = b.tensor->spec();
    size_t first = 0;
    const size_t left = count_poison(b.tensor->raw(), spec.elements(), spec.dtype, &first);
    if (left > 0) {
      fail(Verdict::unwritten_output,
           fmt::format("{}: output {} left unwritten: {} of {} elements still hold the poison; first at {}", when,
                       spec.name, left, spec.elements(), format_index(first, spec.shape)));
    }
  }
}

protocol::CallReply CaseContext::call(const std::string& op, const nlohmann::json& scalars,
                                      const std::vector<Binding>& bindings, const std::vector<int32_t>& tolerated) {
  std::vector<Snapshot> snapshots;
  prepare(bindings, snapshots);
  protocol::CallReply reply = executor_.call(op, scalars, bindings, settings_.call_timeout_s);
  if (std::find(tolerated.begin(), tolerated.end(), reply.status) != tolerated.end()) {
    // Refused as the workload allows: the outputs need not be written, but
    // nothing outside them may be, and no input may change.
    check_integrity(bindings, snapshots, fmt::format("call of {}", op), false);
    return reply;
  }
  check_status(reply.status, reply.message, op);
  check_integrity(bindings, snapshots, fmt::format("call of {}", op));
  return reply;
}

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
    fail(Verdict::understated_memory, fmt::format("{}: {}", what, j.message));
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
    fail(Verdict::understated_memory, fmt::format("{}: {}", what, j.message));
  }
  return device_floor + std::max<int64_t>(0, j.witnessed - allowance);
}

double CaseContext::time_poisoning(const std::vector<Binding>& set) const {
  const int64_t start = monotonic_ns();
  for (const Binding& b : set) {
    if (protocol::is_written(b.access)) fill_poison(b.tensor->raw(), b.tensor->elements(), b.tensor->spec().dtype);
  }
  return static_cast<double>(monotonic_ns() - start);
}

void CaseContext::judge_witness(const protocol::TimeReply& reply, double poison_ns, double all_sets_bytes,
                                const std::string& op, TimingResult& timing) const {
  WitnessAllowances allowances;
  allowances.per_call_ns = kWitnessPoisonFactor * poison_ns + kWitnessPerCallNs;
  allowances.per_request_ns = witness_per_request_ns(device_.kind, reply.staged);
  allowances.max_setup_per_request_ns = witness_max_copy_ns(device_.kind, reply.staged, all_sets_bytes);
  if (reply.staged) allowances.max_staging_per_request_ns = witness_max_staging_ns(device_.kind, all_sets_bytes);
  const WitnessJudgement j = judge_timing(reply.witnessed, median(reply.device_ns), allowances);
  timing.witness = TimingResult::Witness{j.request_ns,        j.overhead_ns, j.claimed_ns,
                                         j.calls,             j.floor_ns,    reply.witnessed.size(),
                                         reply.staged,        reply.staging_ns, j.staging_counted_ns};
  timing.witness->median_excess = j.median_excess;
  if (reply.staged && std::isfinite(allowances.max_staging_per_request_ns)) {
    timing.witness->staging_allowed_ns = allowances.max_staging_per_request_ns;
  }
  if (j.contradicted) fail(Verdict::forged_timing, fmt::format("timed repetitions of {}: {}", op, j.message));
  if (!j.message.empty()) timing.note = j.message;
}

const TimingResult& CaseContext::time(const std::string& op, const nlohmann::json& scalars,
                                      const std::vector<std::vector<Binding>>& sets, const StageInputs& fresh) {
  HARNESS_CHECK(!sets.empty(), "time() of {} without input sets", op);
  // Without fresh inputs the worker poisons the outputs before every call,
  // inside the witnessed request: the witness allows for it. With them the
  // harness poisons every set before each round, outside it.
  const double poison_ns = fresh ? 0.0 : time_poisoning(sets.front());
  std::vector<std::vector<Snapshot>> snapshots(sets.size());
  double set_bytes = 0;
  for (size_t s = 0; s < sets.size(); ++s) {
    prepare(sets[s], snapshots[s]);
    if (s == 0) {
      for (const Binding& b : sets[s]) set_bytes += static_cast<double>(b.tensor->bytes());
    }
  }
  const protocol::TimingPolicy& policy = settings_.timing;
  // Each call may take up to the call timeout; the loop itself stops after
  // max_ms of timed work.
  const double timeout = settings_.call_timeout_s * static_cast<double>(sets.size() + 2) + 2 * policy.max_ms / 1000.0;
  FreshInputs fresh_and_checked;
  size_t round = 1;
  if (fresh) {
    fresh_and_checked = [&] {
      for (size_t s = 0; s < sets.size(); ++s) {
        // Every executor has the round's outputs in the tensors by now (a
        // process submission's are read back before each new round).
        check_integrity(sets[s], snapshots[s],
                        fmt::format("timed repetitions of {}, round {}, input set {} of {}", op, round, s + 1, sets.size()));
      }
      InputStage stage;
      fresh(stage);
      // Everything else for the round before the new inputs become visible
      // (harness/challenge_api/input_stage.h): a worker watching its inputs gets no
      // head start but the burst of publish().
      std::set<const SharedTensor*> snapshotted;
      for (size_t s = 0; s < sets.size(); ++s) {
        guard_and_poison(sets[s]);
        for (Snapshot& snapshot : snapshots[s]) {
          if (stage.apply(*snapshot.tensor, snapshot.bytes.data())) snapshotted.insert(snapshot.tensor);
        }
      }
      HARNESS_CHECK(snapshotted.size() == stage.staged_tensors(),
                    "timed repetitions of {}: {} tensors staged for round {}, {} of them inputs of its sets", op,
                    stage.staged_tensors(), round + 1, snapshotted.size());
      stage.publish();
      ++round;
    };
  }
  protocol::TimeReply reply = executor_.time(op, scalars, sets, policy, timeout, fresh_and_checked);
  check_status(reply.status, reply.message, op + " (timed repetitions)");
  for (size_t s = 0; s < sets.size(); ++s) {
    check_integrity(sets[s], snapshots[s], fmt::format("timed repetitions of {}, input set {} of {}", op, s + 1, sets.size()));
  }
  HARNESS_CHECK(!reply.device_ns.empty(), "timing of {} returned no samples", op);

  TimingResult timing;
  if (!reply.witnessed.empty()) judge_witness(reply, poison_ns, set_bytes * static_cast<double>(sets.size()), op, timing);
  timing.clock = executor_.device_clock();
  timing.samples_ns = reply.device_ns;
  // Work a submission launches on a stream the events do not see finishes
  // after the stop event: the host clock around call + device synchronise
  // then far exceeds the event time. Use the host clock in that case.
  const double event_median = median(reply.device_ns);
  const double wall_median = median(reply.wall_ns);
  // The slack covers synchronisation and the timer's 20 us hold ahead of
  // each call (CudaTimer), both in the host clock and not in the events.
  if (timing.clock == "cuda-events" && wall_median > 2.0 * event_median + 50e3) {
    timing.clock = "wall-clock";
    timing.samples_ns = reply.wall_ns;
    timing.note = fmt::format(
        "CUDA events saw {:.1f} us per call but call + device synchronise took {:.1f} us: work escaped the "
        "events (another stream?); timed with the host clock instead",
        event_median / 1e3, wall_median / 1e3);
  }
  timing.summary = summarize(timing.samples_ns);
  timing.sets = sets.size();
  timing.set_bytes = set_bytes;
  timing.cache_cold = judged_cold(set_bytes, sets.size(), bytes_, device_.cache_bytes);
  timing.warmup_calls = reply.warmup_calls;
  result_.timing = timing;
  if (bytes_.total() > 0 && timing.scored_median_ns() > 0) {
    result_.bandwidth = bytes_.total() / (timing.scored_median_ns() * 1e-9);
    const double roofline = device_.peak ? roofline_bytes_per_second(*device_.peak, bytes_) : 0;
    if (roofline > 0) {
      result_.roofline = roofline;
      result_.peak_fraction = *result_.bandwidth / roofline;
    }
  }
  return *result_.timing;
}

}  // namespace harness
