// WorkerExecutor::time: a timing driven by the harness in batches whose
// sizes it chooses, each request timed by its own clock (the timing witness),
// a GPU worker's copies staged in requests of their own.
#include <algorithm>
#include <cmath>
#include <set>

#include "harness/core/clock.h"
#include "harness/timing/timing_loop.h"
#include "harness/definitions/verdict.h"
#include "harness/executors/worker_executor.h"

namespace harness {

using nlohmann::json;

namespace {

// A timed batch lasts about this long, so that a request's own cost (its
// messages, binding the sets) amortises over the batch's calls.
constexpr double kBatchTargetNs = 50e6;

// Timings the rest of the harness can use: one device and one wall sample
// per timed call, finite and not negative.
bool usable_samples(const protocol::TimeReply& reply) {
  // A warm-up batch has no samples; how many a batch must have is checked
  // against what the harness asked for.
  if (reply.device_ns.size() != reply.wall_ns.size()) return false;
  for (const auto* samples : {&reply.device_ns, &reply.wall_ns}) {
    for (double ns : *samples) {
      if (!std::isfinite(ns) || ns < 0) return false;
    }
  }
  return true;
}

}  // namespace

protocol::TimeReply WorkerExecutor::time(const std::string& op, const json& scalars,
                                         const std::vector<std::vector<Binding>>& sets,
                                         const protocol::TimingPolicy& policy, double timeout_s,
                                         const FreshInputs& fresh) {
  ensure_started(timeout_s);
  json set_list = json::array();
  for (const auto& set : sets) {
    map(set, op);
    set_list.push_back(bindings_to_json(set));
  }
  const std::string what = op + " (timed repetitions)";
  const size_t n = sets.size();
  protocol::TimeReply total;
  // On a GPU the copies of a request's sets would hide its calls from the
  // witness (uploading 400 MB of sets takes 100 times longer than the calls):
  // they go in requests of their own, before and after each timed one.
  total.staged = target_.stage_copies;
  std::set<uint64_t> buffer_ids;
  for (const auto& set : sets) {
    for (const Binding& b : set) buffer_ids.insert(b.tensor->buffer().id());
  }
  const json set_buffers = buffer_ids;
  auto copy_sets = [&](const char* direction) {
    const int64_t start = monotonic_ns();
    const json body = request(json{{"type", direction}, {"buffers", set_buffers}}, -1, timeout_s,
                              fmt::format("{} ({} of the input sets)", what, direction));
    total.staging_ns += static_cast<double>(monotonic_ns() - start);
    const auto ok = body.find("ok");
    if (ok == body.end() || !ok->is_boolean() || !ok->get<bool>()) {
      raise_fault(decode<protocol::CallReply>(body, what).fault, what);
      malformed(what, body, fmt::format("no answer to the {} of the sets", direction));
    }
  };
  size_t next_set = 0;
  // The harness's clock around the last batch, and its staging, which
  // sizes the next batch (a staged GPU round is mostly its copies).
  double last_batch_ns = 0;
  double last_batch_staging_ns = 0;
  size_t last_batch_calls = 0;
  // One batch: exactly the calls asked for, timed by this process's clock
  // around the request, which no code in the worker can reach (the timing
  // witness, harness/witness/timing_witness.h). False when the submission
  // returned an error status.
  auto run_batch = [&](size_t warmup, size_t calls) {
    // With fresh inputs every request is one round on outputs the harness
    // has just poisoned (CaseContext::time): the worker's own poisoning
    // would only add time the witness must then allow for.
    const protocol::TimingBatch batch{warmup, calls, next_set, static_cast<bool>(fresh), total.staged};
    const double staged_before = total.staging_ns;
    if (total.staged) copy_sets("upload");
    const int64_t start = monotonic_ns();
    const json body = request(json{{"type", "time"}, {"op", op}, {"scalars", scalars}, {"sets", set_list}, {"batch", batch}},
                              -1, timeout_s, what);
    last_batch_ns = static_cast<double>(monotonic_ns() - start);
    // The outputs (and the inputs, to show they were left alone) back in
    // the harness's tensors before it checks them or stages a new round.
    if (total.staged && body.contains("device_ns")) copy_sets("download");
    last_batch_staging_ns = total.staging_ns - staged_before;
    last_batch_calls = warmup + calls;
    total.witnessed.push_back(protocol::WitnessedRequest{last_batch_ns, warmup, calls, 0.0, 0.0, last_batch_staging_ns});
    if (!body.contains("device_ns")) {
      const auto failed = decode<protocol::CallReply>(body, what);
      raise_fault(failed.fault, what);
      malformed(what, body, "neither samples nor a fault");
    }
    const auto reply = decode<protocol::TimeReply>(body, what);
    if (reply.status != 0) {
      total.status = reply.status;
      total.message = reply.message;
      return false;
    }
    if (reply.warmup_calls != warmup || reply.device_ns.size() != calls || reply.wall_ns.size() != calls) {
      throw VerdictException(Verdict::forged_timing,
                             fmt::format("{}: the harness asked for {} warm-up and {} timed calls; the reply claims {} and {}",
                                         what, warmup, calls, reply.warmup_calls, reply.device_ns.size()));
    }
    if (!usable_samples(reply)) malformed(what, body, "its timings are not one finite, non-negative sample per call");
    protocol::WitnessedRequest& seen = total.witnessed.back();
    seen.claimed_ns = reply.warmup_ns;
    for (double ns : reply.wall_ns) seen.claimed_ns += ns;
    seen.claimed_setup_ns = reply.setup_ns;
    total.warmup_calls += warmup;
    total.warmup_ns += reply.warmup_ns;
    total.setup_ns += reply.setup_ns;
    total.device_ns.insert(total.device_ns.end(), reply.device_ns.begin(), reply.device_ns.end());
    total.wall_ns.insert(total.wall_ns.end(), reply.wall_ns.begin(), reply.wall_ns.end());
    next_set = (next_set + warmup + calls) % n;
    return true;
  };
  if (n == 0) return total;
  // With fresh inputs, calls go in whole rounds, one request each, the sets
  // given new inputs before every round but the first (FreshInputs).
  bool called = false;
  auto run_calls = [&](size_t warmup, size_t calls) {
    if (!fresh) return run_batch(warmup, calls);
    const auto round_up = [n](size_t count) { return (count + n - 1) / n * n; };
    warmup = round_up(warmup);
    calls = round_up(calls);
    while (warmup + calls > 0) {
      if (called) fresh();
      called = true;
      const size_t w = std::min(warmup, n);
      if (!run_batch(w, n - w)) return false;
      warmup -= w;
      calls -= n - w;
    }
    return true;
  };

  // Warm-up: every set once, then more until warmup_ms has passed (at most
  // 100 calls per set), as run_timing_loop does.
  if (!run_calls(n, 0)) return total;
  const double warmup_ns = policy.warmup_ms * 1e6;
  // The harness's clock around the first round, its staging included: a
  // GPU's staged calls alone would take a hundred rounds of copies to fill
  // the warm-up.
  double witnessed_ns = total.staging_ns;
  for (const auto& r : total.witnessed) witnessed_ns += r.ns;
  if (witnessed_ns < warmup_ns) {
    const double per_call = witnessed_ns / static_cast<double>(n);
    const auto more = static_cast<size_t>(std::ceil((warmup_ns - witnessed_ns) / std::max(per_call, 1.0)));
    if (!run_calls(std::min(more, 99 * n), 0)) return total;
  }
  auto last_per_call_ns = [&] {
    return (last_batch_ns + last_batch_staging_ns) / static_cast<double>(std::max<size_t>(last_batch_calls, 1));
  };
  double per_call_ns = last_per_call_ns();

  // Timed batches of about kBatchTargetNs each, until the policy says stop:
  // the same rules as run_timing_loop, checked between batches.
  const int64_t measure_start = monotonic_ns();
  double measured_ns = 0;
  TimingStopRule stop(policy, n);
  while (true) {
    const size_t count = total.device_ns.size();
    const double left_ns = policy.max_ms * 1e6 - static_cast<double>(monotonic_ns() - measure_start);
    size_t size = std::max(stop.check_every(), static_cast<size_t>(std::ceil(kBatchTargetNs / std::max(per_call_ns, 1.0))));
    size = std::min(size, static_cast<size_t>(std::ceil(std::max(left_ns, 0.0) / std::max(per_call_ns, 1.0))));
    size = std::max(size, count < kMinimumSamples ? kMinimumSamples - count : size_t{1});
    size = std::min(size, policy.max_samples - std::min(count, policy.max_samples));
    if (size == 0) break;
    if (!run_calls(0, size)) return total;
    per_call_ns = last_per_call_ns();
    for (size_t i = count; i < total.device_ns.size(); ++i) measured_ns += total.device_ns[i];
    const double elapsed_ms = static_cast<double>(monotonic_ns() - measure_start) / 1e6;
    if (stop.done(total.device_ns, measured_ns, elapsed_ms, true)) break;
  }
  return total;
}

}  // namespace harness
