#include "harness/executors/process_timing.h"

#include <fmt/format.h>

#include "harness/core/clock.h"
#include "harness/executors/process_executor.h"
#include "harness/executors/scratch_files.h"
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
      revealed_(sets.size(), false) {}

// Inputs once per set and round, written where the process cannot see them
// and moved into its scratch folder as their call goes out: a process that
// watched its folder could otherwise start on a set while the harness still
// writes the others, or during another set's call, in time no call's timing
// shows.
void ProcessTiming::write_inputs() {
  for (size_t s = 0; s < sets_.size(); ++s) {
    requests_[s] = process_.call_request(op_, scalars_, sets_[s], prefix(s), true);
  }
  revealed_.assign(sets_.size(), false);
}

protocol::TimeReply ProcessTiming::run(const protocol::TimingPolicy& policy, const FreshInputs& fresh) {
  write_inputs();
  std::function<void()> new_round;
  if (fresh) {
    // Every output of the round is in the tensors by now: `fresh` checks
    // them before it gives new inputs.
    new_round = [&] {
      fresh();
      write_inputs();
    };
  }
  const protocol::TimeReply loop = run_timing_loop(
      sets_.size(), [this](size_t s) { return call(s); }, policy, new_round);
  // The last round's inputs go too: what stays in the scratch folder between
  // requests is the process's own, and its memory witness counts it.
  for (size_t s = 0; s < sets_.size(); ++s) process_.clear_inputs(sets_[s], prefix(s));
  protocol::TimeReply reply;
  reply.status = loop.status;
  reply.message = message_;
  reply.device_ns = loop.device_ns;
  reply.wall_ns = loop.wall_ns;
  reply.warmup_calls = loop.warmup_calls;
  return reply;
}

// Outputs deleted before every call, so a call that does not write them is
// caught; read as the call replies, its time stopped: a reply is the claim
// that they are written. Read when the round ended, a process could answer
// a call at once and write its outputs while the next call was timed
// (process-exploit-reply-before-work).
TimedCall ProcessTiming::call(size_t s) {
  for (const Binding& b : sets_[s]) {
    if (is_written(b.access)) {
      clear_scratch_path(fmt::format("{}/{}-{}.out.npy", process_.target_.scratch, prefix(s), b.tensor->spec().name));
    }
  }
  if (!revealed_[s]) process_.reveal_inputs(sets_[s], prefix(s));
  revealed_[s] = true;
  const int64_t id = process_.next_id_++;
  json request = requests_[s];
  request["id"] = id;
  TimedCall timed;
  const int64_t start = monotonic_ns();
  const json answer = process_.exchange(request, timeout_s_, what_);
  timed.device_ns = timed.wall_ns = static_cast<double>(monotonic_ns() - start);
  timed.status = process_.status_of(answer, id, what_, &message_);
  if (timed.status == HARNESS_STATUS_OK) process_.read_outputs(sets_[s], prefix(s), what_);
  return timed;
}

}  // namespace harness
