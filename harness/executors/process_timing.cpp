#include "harness/executors/process_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/core/clock.h"
#include "harness/core/dtype.h"
#include "harness/definitions/verdict.h"
#include "harness/executors/process_executor.h"
#include "harness/executors/scratch_files.h"
#include "harness/witness/witness_parts.h"
#include "harness_abi.h"

namespace harness {

using nlohmann::json;

protocol::TimeReply ProcessExecutor::time(const std::string& op, const json& scalars,
                                          const std::vector<std::vector<Binding>>& sets,
                                          const protocol::TimingPolicy& policy, double timeout_s,
                                          const FreshInputs& fresh) {
  ensure_started();
  if (!ops_.count(op)) {
    protocol::TimeReply reply;
    reply.status = HARNESS_STATUS_UNSUPPORTED;
    reply.message = fmt::format("the process does not implement op {}", op);
    return reply;
  }
  return ProcessTiming(*this, op, scalars, sets, timeout_s).run(policy, fresh);
}

ProcessTiming::ProcessTiming(ProcessExecutor& process, const std::string& op, const json& scalars,
                             const std::vector<std::vector<Binding>>& sets, double timeout_s)
    : process_(process),
      op_(op),
      what_(op + " (timed repetitions)"),
      scalars_(scalars),
      sets_(sets),
      timeout_s_(timeout_s),
      requests_(sets.size()),
      revealed_(sets.size(), false) {
  for (const auto& set : sets_) set_buffers_.push_back(buffer_ids_of(set));
}

// Inputs once per set and round, written where the process cannot see them
// and moved into its scratch folder as their call goes out: a process that
// watched its folder could otherwise start on a set while the harness still
// writes the others, or during another set's call, in time no call's timing
// shows.
void ProcessTiming::write_inputs() {
  for (size_t s = 0; s < sets_.size(); ++s) {
    requests_[s] = process_.call_request(op_, scalars_, sets_[s], prefix(s), true);
    // Protocol 2: the process may claim the time of a timed call.
    if (process_.computes_in_twins()) requests_[s]["timed"] = true;
  }
  revealed_.assign(sets_.size(), false);
}

protocol::TimeReply ProcessTiming::run(const protocol::TimingPolicy& policy, const FreshInputs& fresh) {
  fresh_inputs_ = static_cast<bool>(fresh);
  if (process_.computes_in_twins()) {
    for (const auto& set : sets_) process_.share(set, what_);
    reads_at_reply_ = !fresh_inputs_ || !witness_part_disabled("twin-reads-at-reply");
  }
  write_inputs();
  std::function<void()> new_round;
  if (fresh) {
    // Every output of the round is in the tensors by now: `fresh` checks
    // them before it gives new inputs.
    new_round = [&] {
      if (!reads_at_reply_) copy_every_set_out();
      fresh();
      write_inputs();
    };
  }
  const protocol::TimeReply loop = run_timing_loop(
      sets_.size(), [this](size_t s) { return call(s); }, policy, new_round);
  if (!reads_at_reply_) copy_every_set_out();
  // The last round's inputs go too: what stays in the scratch folder between
  // requests is the process's own, and its memory witness counts it.
  if (!process_.computes_in_twins()) {
    for (size_t s = 0; s < sets_.size(); ++s) process_.clear_inputs(sets_[s], prefix(s));
  }
  protocol::TimeReply reply;
  reply.status = loop.status;
  reply.message = message_;
  reply.device_ns = loop.device_ns;
  reply.wall_ns = loop.wall_ns;
  reply.warmup_calls = loop.warmup_calls;
  const auto claims =
      static_cast<size_t>(std::count_if(claimed_ns_.begin(), claimed_ns_.end(), [](const auto& c) { return c; }));
  process_.claimed_timing_ = claims > 0;
  if (claims > 0 && loop.status == HARNESS_STATUS_OK) {
    if (claims != request_ns_.size()) {
      throw VerdictException(Verdict::error,
                             fmt::format("{}: the process claimed the time of {} of its {} calls: a process claims "
                                         "every timed call's time or none",
                                         what_, claims, request_ns_.size()));
    }
    witness_claims(reply);
  }
  return reply;
}

// Outputs deleted before every call, so a call that does not write them is
// caught; read as the call replies, its time stopped: a reply is the claim
// that they are written. Read when the round ended, a process could answer
// a call at once and write its outputs while the next call was timed
// (process-exploit-reply-before-work).
TimedCall ProcessTiming::call(size_t s) {
  if (process_.computes_in_twins()) return call_in_twins(s);
  for (const Binding& b : sets_[s]) {
    if (is_written(b.access)) {
      clear_scratch_path(fmt::format("{}/{}-{}.out.npy", process_.target_.scratch, prefix(s), b.tensor->spec().name));
    }
  }
  if (!revealed_[s]) process_.reveal_inputs(sets_[s], prefix(s));
  revealed_[s] = true;
  TimedCall timed = exchange(s);
  if (timed.status == HARNESS_STATUS_OK) process_.read_outputs(sets_[s], prefix(s), what_);
  return timed;
}

TimedCall ProcessTiming::exchange(size_t s) {
  const int64_t id = process_.next_id_++;
  json request = requests_[s];
  request["id"] = id;
  TimedCall timed;
  const int64_t start = monotonic_ns();
  const json answer = process_.exchange(request, timeout_s_, what_);
  timed.device_ns = timed.wall_ns = static_cast<double>(monotonic_ns() - start);
  timed.status = process_.status_of(answer, id, what_, &message_);
  if (timed.status != HARNESS_STATUS_OK) return timed;
  request_ns_.push_back(timed.wall_ns);
  // Only version 2 claims (version 1's replies are timed by the clock alone).
  const std::optional<TimedCall> claimed = process_.computes_in_twins() ? claim_of(answer) : std::optional<TimedCall>();
  claimed_ns_.push_back(claimed ? std::optional<double>(claimed->device_ns) : std::nullopt);
  if (!claimed) return timed;
  timed.device_ns = claimed->device_ns;
  timed.wall_ns = claimed->wall_ns;
  return timed;
}

// A claim is the submission's word, like a compiled worker's: numbers the
// harness checks only for sense here, and against its own clock after the
// loop (witness_claims).
std::optional<TimedCall> ProcessTiming::claim_of(const json& answer) const {
  const bool elapsed = answer.contains("elapsed_ns"), host = answer.contains("host_ns");
  if (!elapsed && !host) return std::nullopt;
  const auto number = [&](const char* name) {
    const json& v = answer.contains(name) ? answer[name] : json();
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      throw VerdictException(Verdict::error,
                             fmt::format("{}: the reply's {} is {}, not a time in nanoseconds (a reply that claims "
                                         "its call's time gives elapsed_ns and host_ns)",
                                         what_, name, v.dump().substr(0, 80)));
    }
    return v.get<double>();
  };
  TimedCall claimed;
  claimed.device_ns = number("elapsed_ns");
  claimed.wall_ns = number("host_ns");
  return claimed;
}

// Each request held one call; those of the warm-up come first. The harness
// copied the sets around the requests, outside its clock, so a request is
// allowed what a compiled worker's is when the harness owns its memory.
void ProcessTiming::witness_claims(protocol::TimeReply& reply) const {
  reply.harness_copies = true;
  if (witness_part_disabled("process-claims")) return;
  for (size_t i = 0; i < request_ns_.size(); ++i) {
    protocol::WitnessedRequest r;
    r.ns = request_ns_[i];
    (i < reply.warmup_calls ? r.warmup_calls : r.timed_calls) = 1;
    r.claimed_ns = *claimed_ns_[i];  // every request claimed (run() checked)
    reply.witnessed.push_back(r);
  }
}

// Only with the defence switched off (twin-reads-at-reply): the round's
// outputs read as it ends, as they once were, so that the test of
// process-v2-exploit-reply-before-work shows what reading at the reply stops.
void ProcessTiming::copy_every_set_out() {
  for (const auto& buffers : set_buffers_) process_.twins_->copy_out(buffers);
}

// With fresh inputs every round's outputs were poisoned as it began and are
// checked as it ends (FreshInputs); a set's buffers are copied only around
// its own call, so what a process writes into another set's twins after
// that set's reply is never read as an answer (and is caught as that set's
// next call goes out).
TimedCall ProcessTiming::call_in_twins(size_t s) {
  if (!fresh_inputs_) {
    for (const Binding& b : sets_[s]) {
      if (is_written(b.access)) fill_poison(b.tensor->raw(), b.tensor->elements(), b.tensor->spec().dtype);
    }
  }
  process_.twins_->copy_in(set_buffers_[s]);
  const TimedCall timed = exchange(s);
  if (reads_at_reply_) process_.twins_->copy_out(set_buffers_[s]);
  if (timed.status != HARNESS_STATUS_OK || fresh_inputs_) return timed;
  for (const Binding& b : sets_[s]) {
    if (b.access != protocol::Access::out) continue;
    size_t first = 0;
    const size_t left = count_poison(b.tensor->raw(), b.tensor->elements(), b.tensor->spec().dtype, &first);
    if (left > 0) {
      throw VerdictException(Verdict::unwritten_output,
                             fmt::format("{}: the process replied ok but left output {} unwritten: {} of {} elements "
                                         "still hold the poison at its reply; first at {}",
                                         what_, b.tensor->spec().name, left, b.tensor->elements(), first));
    }
  }
  return timed;
}

}  // namespace harness
