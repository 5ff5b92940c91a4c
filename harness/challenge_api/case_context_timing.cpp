// CaseContext::time: timed calls over rotating input sets, with the checks
// between rounds, the timing witness, and the bandwidth against the roofline.
#include <cmath>
#include <set>

#include "harness/challenge_api/case_context.h"
#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/stats.h"
#include "harness/results/bandwidth_figures.h"
#include "harness/witness/machine_load.h"
#include "harness/witness/timing_witness.h"

namespace harness {

namespace {

// The timing witness's stated overheads (harness/witness/timing_witness.h).
// Between two calls the worker re-poisons the outputs: allowed at twice what
// the same poisoning takes here, plus the loop's clock reads and its running
// median (kWitnessPerCallNs).
constexpr double kWitnessPoisonFactor = 2.0;

// The CUDA events may miss work launched on a stream they do not see: the
// host clock around call + synchronise is then far above them. The slack
// covers synchronisation and the timer's 20 us hold ahead of each call.
bool work_escaped_the_events(double event_median_ns, double wall_median_ns) {
  return wall_median_ns > 2.0 * event_median_ns + 50e3;
}

}  // namespace

const TimingResult& CaseContext::time(const std::string& op, const nlohmann::json& scalars,
                                      const std::vector<std::vector<SharedTensor*>>& set_tensors,
                                      const StageInputs& fresh) {
  HARNESS_CHECK(!set_tensors.empty(), "time() of {} without input sets", op);
  TimedSets timed = prepare_timed_sets(op, scalars, set_tensors);
  // Without fresh inputs the worker poisons the outputs before every call,
  // inside the witnessed request: the witness allows for it. With them the
  // harness poisons every set before each round, outside it.
  const double poison_ns = fresh ? 0.0 : time_poisoning(timed.bindings.front());
  FreshInputs next_round;
  if (fresh) next_round = [&, round = size_t{1}]() mutable { start_round(op, timed, fresh, round++); };
  const protocol::TimingPolicy& policy = settings_.timing;
  // Each call may take up to the call timeout; the loop itself stops after
  // max_ms of timed work.
  const double timeout =
      settings_.call_timeout_s * static_cast<double>(timed.bindings.size() + 2) + 2 * policy.max_ms / 1000.0;
  const LoadWindow load([this] { return executor_.processes(); });
  const protocol::TimeReply reply = executor_.time(op, scalars, timed.bindings, policy, timeout, next_round);
  const std::optional<TimingResult::MachineLoad> machine_load = load.close();
  check_status(reply.status, reply.message, op + " (timed repetitions)");
  check_timed_sets(op, timed, "");
  HARNESS_CHECK(!reply.device_ns.empty(), "timing of {} returned no samples", op);
  result_.timing = timing_of(reply, op, poison_ns, timed);
  result_.timing->machine_load = machine_load;
  record_bandwidth();
  return *result_.timing;
}

CaseContext::TimedSets CaseContext::prepare_timed_sets(const std::string& op, const nlohmann::json& scalars,
                                                       const std::vector<std::vector<SharedTensor*>>& set_tensors) {
  TimedSets timed;
  timed.snapshots.resize(set_tensors.size());
  for (size_t s = 0; s < set_tensors.size(); ++s) {
    timed.bindings.push_back(bind(op, scalars, set_tensors[s]));
    prepare(timed.bindings[s], timed.snapshots[s]);
  }
  for (const Binding& b : timed.bindings.front()) timed.set_bytes += static_cast<double>(b.tensor->bytes());
  return timed;
}

void CaseContext::check_timed_sets(const std::string& op, const TimedSets& timed, const std::string& round) const {
  for (size_t s = 0; s < timed.bindings.size(); ++s) {
    check_integrity(
        timed.bindings[s], timed.snapshots[s],
        fmt::format("timed repetitions of {}{}, input set {} of {}", op, round, s + 1, timed.bindings.size()));
  }
}

// Between rounds: the round just timed checked (every executor has its
// outputs in the tensors by now), the driver's new inputs staged, every set
// guarded and poisoned and its snapshot brought up to date, and only then
// the new inputs published (harness/challenge_api/input_stage.h): a worker
// watching its inputs gets no head start but the burst of publish().
void CaseContext::start_round(const std::string& op, TimedSets& timed, const StageInputs& fresh, size_t round) {
  check_timed_sets(op, timed, fmt::format(", round {}", round));
  InputStage stage;
  fresh(stage);
  std::set<const SharedTensor*> snapshotted;
  for (size_t s = 0; s < timed.bindings.size(); ++s) {
    guard_and_poison(timed.bindings[s]);
    for (Snapshot& snapshot : timed.snapshots[s]) {
      // A pristine copy is the caller's, changed already as staged.
      const bool staged = snapshot.pristine != nullptr ? stage.stages(*snapshot.tensor)
                                                       : stage.apply(*snapshot.tensor, snapshot.bytes.data());
      if (staged) snapshotted.insert(snapshot.tensor);
    }
  }
  HARNESS_CHECK(snapshotted.size() == stage.staged_tensors(),
                "timed repetitions of {}: {} tensors staged for round {}, {} of them inputs of its sets", op,
                stage.staged_tensors(), round + 1, snapshotted.size());
  stage.publish();
}

TimingResult CaseContext::timing_of(const protocol::TimeReply& reply, const std::string& op, double poison_ns,
                                    const TimedSets& timed) const {
  TimingResult timing;
  const double all_sets_bytes = timed.set_bytes * static_cast<double>(timed.bindings.size());
  if (!reply.witnessed.empty()) judge_witness(reply, poison_ns, all_sets_bytes, op, timing);
  timing.clock = executor_.device_clock();
  timing.samples_ns = reply.device_ns;
  const double event_median = median(reply.device_ns);
  const double wall_median = median(reply.wall_ns);
  if (timing.clock == "cuda-events" && work_escaped_the_events(event_median, wall_median)) {
    timing.clock = "wall-clock";
    timing.samples_ns = reply.wall_ns;
    timing.note = fmt::format(
        "CUDA events saw {:.1f} us per call but call + device synchronise took {:.1f} us: work escaped the "
        "events (another stream?); timed with the host clock instead",
        event_median / 1e3, wall_median / 1e3);
  }
  timing.summary = summarize(timing.samples_ns);
  timing.sets = timed.bindings.size();
  timing.set_bytes = timed.set_bytes;
  timing.cache_cold = judged_cold(timed.set_bytes, timed.bindings.size(), bytes_, device_.cache_bytes);
  timing.warmup_calls = reply.warmup_calls;
  return timing;
}

void CaseContext::record_bandwidth() {
  result_.bytes = bytes_;
  harness::record_bandwidth(result_, device_.peak ? &*device_.peak : nullptr);
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
  WitnessAllowances allowances = request_allowances(device_.kind, reply.staged, reply.harness_copies, all_sets_bytes);
  allowances.per_call_ns = kWitnessPoisonFactor * poison_ns + kWitnessPerCallNs;
  const WitnessJudgement j = judge_timing(reply.witnessed, median(reply.device_ns), allowances);
  timing.witness = TimingResult::Witness{j.request_ns, j.overhead_ns,    j.claimed_ns,
                                         j.calls,      j.floor_ns,       reply.witnessed.size(),
                                         reply.staged, reply.staging_ns, j.staging_counted_ns};
  timing.witness->median_excess = j.median_excess;
  if (reply.staged && std::isfinite(allowances.max_staging_per_request_ns)) {
    timing.witness->staging_allowed_ns = allowances.max_staging_per_request_ns;
  }
  if (j.contradicted) fail(Verdict::forged_timing, fmt::format("timed repetitions of {}: {}", op, j.message));
  if (!j.message.empty()) timing.note = j.message;
}

}  // namespace harness
