#include "harness/timing/timing_loop.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/core/clock.h"
#include "harness/timing/warmup_rule.h"

namespace harness {

namespace {

double running_median(std::vector<double> values) {
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  return values[middle];
}

}  // namespace

protocol::TimeReply run_timing_loop(size_t set_count, const std::function<TimedCall(size_t)>& call_set,
                                    const protocol::TimingPolicy& policy, const std::function<void()>& new_round) {
  protocol::TimeReply reply;
  if (set_count == 0) return reply;
  const size_t n = set_count;
  size_t calls_made = 0;
  auto call = [&](size_t set) {
    if (new_round && set == 0 && calls_made > 0) new_round();
    ++calls_made;
    return call_set(set);
  };
  // Only whole rounds when each round gets new inputs.
  auto round_open = [&] { return new_round && calls_made % n != 0; };

  const int64_t warmup_start = monotonic_ns();
  const WarmupRule warmup(policy, n);
  size_t index = 0;
  while (round_open() || warmup.wants_more(index, static_cast<double>(monotonic_ns() - warmup_start))) {
    const TimedCall c = call(index % n);
    if (c.status != 0) {
      reply.status = c.status;
      return reply;
    }
    reply.warmup_ns += c.wall_ns;
    ++index;
  }
  reply.warmup_calls = index;

  const int64_t measure_start = monotonic_ns();
  double measured_ns = 0;
  TimingStopRule stop(policy, n);
  while (true) {
    const TimedCall c = call((index + reply.device_ns.size()) % n);
    if (c.status != 0) {
      reply.status = c.status;
      return reply;
    }
    reply.device_ns.push_back(c.device_ns);
    reply.wall_ns.push_back(c.wall_ns);
    measured_ns += c.device_ns;
    const size_t count = reply.device_ns.size();
    const double elapsed_ms = static_cast<double>(monotonic_ns() - measure_start) / 1e6;
    if (round_open()) continue;
    if (stop.done(reply.device_ns, measured_ns, elapsed_ms, count % stop.check_every() == 0)) break;
  }
  return reply;
}

bool TimingStopRule::done(const std::vector<double>& device_ns, double measured_ns, double elapsed_ms,
                          bool check_median) {
  const size_t count = device_ns.size();
  // The time budget ends the loop, but never before kMinimumSamples: a
  // median of a few calls says nothing about noise.
  if (count >= policy_.max_samples) return true;
  if (elapsed_ms >= policy_.max_ms && count >= kMinimumSamples) return true;
  // Every set must have been timed at least once after its last poisoning.
  const bool enough =
      count >= std::max({policy_.min_samples, sets_, kMinimumSamples}) && measured_ns / 1e6 >= policy_.min_ms;
  if (check_median) {
    const double median = running_median(device_ns);
    const bool steady = last_median_ > 0 && std::fabs(median - last_median_) <= policy_.settle_tolerance * median;
    settled_checks_ = steady ? settled_checks_ + 1 : 0;
    last_median_ = median;
  }
  return enough && settled_checks_ >= 2;
}

protocol::TimeReply run_timing_batch(size_t set_count, const std::function<TimedCall(size_t)>& call,
                                     const protocol::TimingBatch& batch) {
  protocol::TimeReply reply;
  if (set_count == 0) return reply;
  size_t set = batch.first_set % set_count;
  for (size_t i = 0; i < batch.warmup + batch.calls; ++i, set = (set + 1) % set_count) {
    const TimedCall c = call(set);
    if (c.status != 0) {
      reply.status = c.status;
      return reply;
    }
    if (i < batch.warmup) {
      reply.warmup_ns += c.wall_ns;
      ++reply.warmup_calls;
    } else {
      reply.device_ns.push_back(c.device_ns);
      reply.wall_ns.push_back(c.wall_ns);
    }
  }
  return reply;
}

}  // namespace harness
