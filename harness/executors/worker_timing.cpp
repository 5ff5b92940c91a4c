#include "harness/executors/worker_timing.h"

#include <algorithm>
#include <cmath>

#include "harness/core/clock.h"
#include "harness/definitions/verdict.h"
#include "harness/executors/worker_executor.h"
#include "harness/timing/timing_loop.h"
#include "harness/timing/warmup_rule.h"

namespace harness {

using nlohmann::json;

namespace {

// A timed batch lasts about this long, so that a request's own cost (its
// messages, binding the sets) amortises over the batch's calls.
constexpr double kBatchTargetNs = 50e6;

// One device and one wall sample per timed call, finite and not negative.
bool usable_samples(const protocol::TimeReply& reply) {
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
  for (const auto& set : sets) map(set, op);
  return BatchedTiming(*this, op, scalars, sets, policy, timeout_s, fresh).run();
}

BatchedTiming::BatchedTiming(WorkerExecutor& worker, const std::string& op, const json& scalars,
                             const std::vector<std::vector<Binding>>& sets, const protocol::TimingPolicy& policy,
                             double timeout_s, const FreshInputs& fresh)
    : worker_(worker),
      op_(op),
      what_(op + " (timed repetitions)"),
      scalars_(scalars),
      sets_(sets.size()),
      policy_(policy),
      timeout_s_(timeout_s),
      fresh_(fresh) {
  for (const auto& set : sets) {
    set_list_.push_back(bindings_to_json(set));
    for (const uint64_t id : buffer_ids_of(set)) set_buffer_ids_.insert(id);
  }
  // On a GPU the copies of a request's sets would hide its calls from the
  // witness: they go in requests of their own, before and after each timed
  // one. Where the harness owns the device memory it makes those copies
  // itself, and the worker's requests hold the calls alone.
  total_.staged = worker.target_.stage_copies && !worker.harness_owns_device_memory();
  total_.harness_copies = worker.harness_owns_device_memory();
}

protocol::TimeReply BatchedTiming::run() {
  if (sets_ == 0 || !warm_up()) return total_;
  measure();
  return total_;
}

bool BatchedTiming::warm_up() {
  if (!run_calls(sets_, 0)) return false;
  // The harness's clock around the first round, its staging included: a
  // GPU's staged calls alone would take a hundred rounds of copies to fill it.
  double witnessed_ns = total_.staging_ns + harness_copies_ns_;
  for (const auto& r : total_.witnessed) witnessed_ns += r.ns;
  const size_t more = WarmupRule(policy_, sets_).more_calls(sets_, witnessed_ns);
  return more == 0 || run_calls(more, 0);
}

// Batches of about kBatchTargetNs each until the policy says stop, by the
// rule of the timing loop, checked between batches.
void BatchedTiming::measure() {
  const int64_t start = monotonic_ns();
  double measured_ns = 0;
  TimingStopRule stop(policy_, sets_);
  double per_call_ns = last_per_call_ns();
  while (true) {
    const size_t count = total_.device_ns.size();
    const double left_ns = policy_.max_ms * 1e6 - static_cast<double>(monotonic_ns() - start);
    const size_t size = next_batch_size(per_call_ns, left_ns, stop.check_every());
    if (size == 0 || !run_calls(0, size)) return;
    per_call_ns = last_per_call_ns();
    for (size_t i = count; i < total_.device_ns.size(); ++i) measured_ns += total_.device_ns[i];
    const double elapsed_ms = static_cast<double>(monotonic_ns() - start) / 1e6;
    if (stop.done(total_.device_ns, measured_ns, elapsed_ms, true)) return;
  }
}

size_t BatchedTiming::next_batch_size(double per_call_ns, double left_ns, size_t check_every) const {
  const size_t count = total_.device_ns.size();
  const double per_call = std::max(per_call_ns, 1.0);
  size_t size = std::max(check_every, static_cast<size_t>(std::ceil(kBatchTargetNs / per_call)));
  size = std::min(size, static_cast<size_t>(std::ceil(std::max(left_ns, 0.0) / per_call)));
  size = std::max(size, count < kMinimumSamples ? kMinimumSamples - count : size_t{1});
  return std::min(size, policy_.max_samples - std::min(count, policy_.max_samples));
}

bool BatchedTiming::run_calls(size_t warmup, size_t calls) {
  if (!fresh_) return run_batch(warmup, calls);
  const auto round_up = [this](size_t count) { return (count + sets_ - 1) / sets_ * sets_; };
  warmup = round_up(warmup);
  calls = round_up(calls);
  while (warmup + calls > 0) {
    if (called_) fresh_();
    called_ = true;
    const size_t w = std::min(warmup, sets_);
    if (!run_batch(w, sets_ - w)) return false;
    warmup -= w;
    calls -= sets_ - w;
  }
  return true;
}

// One batch: exactly the calls asked for, timed by this process's clock
// around the request, which no code in the worker can reach.
bool BatchedTiming::run_batch(size_t warmup, size_t calls) {
  // With fresh inputs every request is one round on outputs the harness has
  // just poisoned: the worker's own poisoning would only add time.
  const protocol::TimingBatch batch{warmup, calls, next_set_, static_cast<bool>(fresh_), total_.staged};
  const double staged_before = total_.staging_ns;
  const int64_t copies_start = monotonic_ns();
  if (total_.staged) copy_sets("upload");
  // The round's inputs reach the device as the request goes out.
  if (worker_.harness_owns_device_memory()) worker_.copy_twins(set_buffer_ids_, true);
  const int64_t start = monotonic_ns();
  const json body =
      worker_.request(json{{"type", "time"}, {"op", op_}, {"scalars", scalars_}, {"sets", set_list_}, {"batch", batch}},
                      -1, timeout_s_, what_);
  const int64_t end = monotonic_ns();
  last_batch_ns_ = static_cast<double>(end - start);
  // Outputs (and inputs, to show they were left alone) back in the harness's
  // tensors before it checks them or stages a new round: read at the reply
  // where the harness owns the device memory.
  if (worker_.harness_owns_device_memory()) worker_.copy_twins(set_buffer_ids_, false);
  if (total_.staged && body.contains("device_ns")) copy_sets("download");
  last_batch_staging_ns_ = total_.staging_ns - staged_before;
  if (worker_.harness_owns_device_memory()) {
    last_batch_staging_ns_ = static_cast<double>((start - copies_start) + (monotonic_ns() - end));
    harness_copies_ns_ += last_batch_staging_ns_;
  }
  last_batch_calls_ = warmup + calls;
  // Only a worker's own staging is its to stretch: the harness's copies are not.
  total_.witnessed.push_back(protocol::WitnessedRequest{last_batch_ns_, warmup, calls, 0.0, 0.0,
                                                        total_.staged ? last_batch_staging_ns_ : 0.0});
  return take_reply(body, warmup, calls);
}

bool BatchedTiming::take_reply(const json& body, size_t warmup, size_t calls) {
  if (!body.contains("device_ns")) {
    worker_.raise_fault(worker_.decode<protocol::CallReply>(body, what_).fault, what_);
    worker_.malformed(what_, body, "neither samples nor a fault");
  }
  const auto reply = worker_.decode<protocol::TimeReply>(body, what_);
  if (reply.status != 0) {
    total_.status = reply.status;
    total_.message = reply.message;
    return false;
  }
  if (reply.warmup_calls != warmup || reply.device_ns.size() != calls || reply.wall_ns.size() != calls) {
    throw VerdictException(Verdict::forged_timing,
                           fmt::format("{}: the harness asked for {} warm-up and {} timed calls; the reply claims {} "
                                       "and {}",
                                       what_, warmup, calls, reply.warmup_calls, reply.device_ns.size()));
  }
  if (!usable_samples(reply))
    worker_.malformed(what_, body, "its timings are not one finite, non-negative sample per call");
  protocol::WitnessedRequest& seen = total_.witnessed.back();
  seen.claimed_ns = reply.warmup_ns;
  for (double ns : reply.wall_ns) seen.claimed_ns += ns;
  seen.claimed_setup_ns = reply.setup_ns;
  total_.warmup_calls += warmup;
  total_.warmup_ns += reply.warmup_ns;
  total_.setup_ns += reply.setup_ns;
  total_.device_ns.insert(total_.device_ns.end(), reply.device_ns.begin(), reply.device_ns.end());
  total_.wall_ns.insert(total_.wall_ns.end(), reply.wall_ns.begin(), reply.wall_ns.end());
  next_set_ = (next_set_ + warmup + calls) % sets_;
  return true;
}

void BatchedTiming::copy_sets(const char* direction) {
  const int64_t start = monotonic_ns();
  const json body = worker_.request(json{{"type", direction}, {"buffers", set_buffer_ids_}}, -1, timeout_s_,
                                    fmt::format("{} ({} of the input sets)", what_, direction));
  total_.staging_ns += static_cast<double>(monotonic_ns() - start);
  const auto ok = body.find("ok");
  if (ok == body.end() || !ok->is_boolean() || !ok->get<bool>()) {
    worker_.raise_fault(worker_.decode<protocol::CallReply>(body, what_).fault, what_);
    worker_.malformed(what_, body, fmt::format("no answer to the {} of the sets", direction));
  }
}

double BatchedTiming::last_per_call_ns() const {
  return (last_batch_ns_ + last_batch_staging_ns_) / static_cast<double>(std::max<size_t>(last_batch_calls_, 1));
}

}  // namespace harness
