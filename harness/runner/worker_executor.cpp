#include "harness/runner/worker_executor.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>


#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/stats.h"
#include "harness/core/timing_loop.h"
#include "harness/runner/verdict.h"
#include "harness/witness/memory_witness.h"

namespace harness {

using nlohmann::json;

namespace {
constexpr double kStartTimeoutSeconds = 120;  // loading a library and creating a CUDA context
constexpr double kSmallRequestTimeoutSeconds = 60;
constexpr size_t kOutputInMessages = 1500;
// A timed batch lasts about this long, so that a request's own cost (its
// messages, binding the sets) amortises over the batch's calls.
constexpr double kBatchTargetNs = 50e6;

}  // namespace

json bindings_to_json(const std::vector<Binding>& tensors) {
  json list = json::array();
  for (const Binding& b : tensors) {
    protocol::TensorBinding t;
    t.name = b.tensor->spec().name;
    t.buffer = b.tensor->buffer().id();
    t.dtype = b.tensor->spec().dtype;
    t.elements = b.tensor->elements();
    t.access = b.access;
    list.push_back(t);
  }
  return list;
}

WorkerExecutor::WorkerExecutor(WorkerTarget target) : target_(std::move(target)), log_(target_.log_path) {}

WorkerExecutor::~WorkerExecutor() {
  if (!process_) return;
  try {
    process_->channel().send(json{{"type", "exit"}});
    if (!process_->wait_exit(2.0)) process_->kill_and_reap();
  } catch (...) {
    // The destructor of WorkerProcess kills whatever is left.
  }
}

std::string WorkerExecutor::device_clock() const {
  return target_.device_kind == "cuda" ? "cuda-events" : "cpu-monotonic";
}

std::optional<int64_t> WorkerExecutor::resident_bytes() {
  if (!process_ || target_.device_kind != "cpu") return std::nullopt;
  request(json{{"type", "trim"}}, -1, kSmallRequestTimeoutSeconds, "returning freed memory before a memory reading");
  return resident_anonymous_bytes(process_->pid());
}

std::string WorkerExecutor::drain_output(size_t max_bytes) { return log_.drain(max_bytes); }

void WorkerExecutor::worker_lost(Verdict verdict, const std::string& what, const std::string& how) {
  std::string message = fmt::format("the worker {} during {}", how, what);
  process_.reset();
  mapped_.clear();
  const std::string output = log_.tail(kOutputInMessages);
  if (!output.empty()) message += fmt::format("; its last output: {}", output);
  throw VerdictException(verdict, message);
}

void WorkerExecutor::ensure_started() {
  if (load_failure_) throw VerdictException(Verdict::error, *load_failure_);
  if (process_) return;
  WorkerLaunch launch;
  launch.executable = target_.worker_executable;
  launch.arguments = {"--challenge", target_.challenge, "--library", target_.library, "--device",
                      target_.device_kind, "--device-index", std::to_string(target_.device_index)};
  launch.log_path = target_.log_path;
  process_ = std::make_unique<WorkerProcess>(launch);
  ++starts_;
  std::optional<Channel::Message> hello;
  try {
    hello = process_->channel().receive(kStartTimeoutSeconds);
  } catch (const ChannelClosed&) {
    const auto ending = process_->wait_exit(5.0);
    worker_lost(Verdict::crash, "start-up (loading the submission)", ending.value_or("closed its channel"));
  }
  if (!hello) {
    process_->kill_and_reap();
    worker_lost(Verdict::timeout, "start-up", fmt::format("did not start within {} s", kStartTimeoutSeconds));
  }
  const std::string type = hello->body.value("type", "");
  if (type == "fatal") {
    // Loading fails the same way every time: remember it instead of
    // restarting the worker for every remaining case.
    load_failure_ = "cannot load the submission: " + hello->body.value("message", "");
    process_->wait_exit(5.0);
    process_.reset();
    throw VerdictException(Verdict::error, *load_failure_);
  }
  if (type != "hello") {
    process_->kill_and_reap();
    worker_lost(Verdict::error, "start-up", fmt::format("sent '{}' instead of hello", type));
  }
}

json WorkerExecutor::request(const json& message, int fd, double timeout_s, const std::string& what) {
  ensure_started();
  std::optional<Channel::Message> reply;
  try {
    process_->channel().send(message, fd);
    reply = process_->channel().receive(timeout_s);
  } catch (const ChannelClosed&) {
    const auto ending = process_->wait_exit(5.0);
    worker_lost(Verdict::crash, what, ending ? *ending : process_->kill_and_reap());
  }
  if (!reply) {
    process_->kill_and_reap();
    worker_lost(Verdict::timeout, what, fmt::format("gave no answer within {:.0f} s and was killed", timeout_s));
  }
  if (reply->fd >= 0) ::close(reply->fd);
  return reply->body;
}

void WorkerExecutor::raise_fault(const std::optional<protocol::Fault>& fault, const std::string& what) {
  if (!fault) return;
  if (fault->sticky) {
    // The worker exits by itself after a sticky CUDA error.
    if (process_ && !process_->wait_exit(5.0)) process_->kill_and_reap();
    worker_lost(Verdict::crash, what, fmt::format("hit a fatal device error ({})", fault->message));
  }
  throw VerdictException(Verdict::error, fmt::format("{}: {}", what, fault->message));
}

void WorkerExecutor::map(const std::vector<Binding>& tensors, const std::string& what) {
  for (const Binding& b : tensors) {
    const SharedBuffer& buffer = b.tensor->buffer();
    if (mapped_.count(buffer.id())) continue;
    const json reply = request(json{{"type", "map"}, {"buffer", buffer.id()}, {"bytes", buffer.total_bytes()}},
                               buffer.fd(), kSmallRequestTimeoutSeconds, what + " (mapping " + b.tensor->spec().name + ")");
    if (!reply.value("ok", false)) {
      protocol::CallReply failed = reply.get<protocol::CallReply>();
      raise_fault(failed.fault, what);
    }
    mapped_.insert(buffer.id());
  }
}

protocol::CallReply WorkerExecutor::call(const std::string& op, const json& scalars,
                                         const std::vector<Binding>& tensors, double timeout_s) {
  ensure_started();
  map(tensors, op);
  const json body = request(json{{"type", "call"}, {"op", op}, {"scalars", scalars}, {"tensors", bindings_to_json(tensors)}},
                            -1, timeout_s, op);
  protocol::CallReply reply = body.get<protocol::CallReply>();
  raise_fault(reply.fault, op);
  return reply;
}

protocol::TimeReply WorkerExecutor::time(const std::string& op, const json& scalars,
                                         const std::vector<std::vector<Binding>>& sets,
                                         const protocol::TimingPolicy& policy, double timeout_s) {
  ensure_started();
  json set_list = json::array();
  for (const auto& set : sets) {
    map(set, op);
    set_list.push_back(bindings_to_json(set));
  }
  const std::string what = op + " (timed repetitions)";
  const size_t n = sets.size();
  protocol::TimeReply total;
  total.witness_ns = 0.0;
  size_t next_set = 0;
  double last_batch_ns = 0;  // the harness's clock around the last batch
  size_t last_batch_calls = 0;
  // One batch: exactly the calls asked for, timed by this process's clock
  // around the request, which no code in the worker can reach (the timing
  // witness, harness/witness/timing_witness.h). False when the submission
  // returned an error status.
  auto run_batch = [&](size_t warmup, size_t calls) {
    const protocol::TimingBatch batch{warmup, calls, next_set};
    const int64_t start = monotonic_ns();
    const json body = request(json{{"type", "time"}, {"op", op}, {"scalars", scalars}, {"sets", set_list}, {"batch", batch}},
                              -1, timeout_s, what);
    last_batch_ns = static_cast<double>(monotonic_ns() - start);
    last_batch_calls = warmup + calls;
    *total.witness_ns += last_batch_ns;
    ++total.witness_requests;
    if (!body.contains("device_ns")) {
      protocol::CallReply failed = body.get<protocol::CallReply>();
      raise_fault(failed.fault, what);
      HARNESS_FAIL("the worker answered {} with neither samples nor a fault", what);
    }
    const protocol::TimeReply reply = body.get<protocol::TimeReply>();
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
    total.warmup_calls += warmup;
    total.warmup_ns += reply.warmup_ns;
    total.setup_ns += reply.setup_ns;
    total.device_ns.insert(total.device_ns.end(), reply.device_ns.begin(), reply.device_ns.end());
    total.wall_ns.insert(total.wall_ns.end(), reply.wall_ns.begin(), reply.wall_ns.end());
    next_set = (next_set + warmup + calls) % n;
    return true;
  };
  if (n == 0) return total;

  // Warm-up: every set once, then more until warmup_ms has passed (at most
  // 100 calls per set), as run_timing_loop does.
  if (!run_batch(n, 0)) return total;
  const double warmup_ns = policy.warmup_ms * 1e6;
  if (*total.witness_ns < warmup_ns) {
    const double per_call = *total.witness_ns / static_cast<double>(n);
    const auto more = static_cast<size_t>(std::ceil((warmup_ns - *total.witness_ns) / std::max(per_call, 1.0)));
    if (!run_batch(std::min(more, 99 * n), 0)) return total;
  }
  double per_call_ns = last_batch_ns / static_cast<double>(std::max<size_t>(last_batch_calls, 1));

  // Timed batches of about kBatchTargetNs each, until the policy says stop:
  // the same rules as run_timing_loop, checked between batches.
  const int64_t measure_start = monotonic_ns();
  double measured_ns = 0;
  double last_median = -1;
  int settled_checks = 0;
  const size_t check_every = std::max<size_t>(n, 10);
  while (true) {
    const size_t count = total.device_ns.size();
    const double left_ns = policy.max_ms * 1e6 - static_cast<double>(monotonic_ns() - measure_start);
    size_t size = std::max(check_every, static_cast<size_t>(std::ceil(kBatchTargetNs / std::max(per_call_ns, 1.0))));
    size = std::min(size, static_cast<size_t>(std::ceil(std::max(left_ns, 0.0) / std::max(per_call_ns, 1.0))));
    size = std::max(size, count < kMinimumSamples ? kMinimumSamples - count : size_t{1});
    size = std::min(size, policy.max_samples - std::min(count, policy.max_samples));
    if (size == 0) break;
    if (!run_batch(0, size)) return total;
    per_call_ns = last_batch_ns / static_cast<double>(last_batch_calls);
    for (size_t i = count; i < total.device_ns.size(); ++i) measured_ns += total.device_ns[i];
    const size_t now = total.device_ns.size();
    const double elapsed_ms = static_cast<double>(monotonic_ns() - measure_start) / 1e6;
    if (now >= policy.max_samples) break;
    if (elapsed_ms >= policy.max_ms && now >= kMinimumSamples) break;
    const bool enough = now >= std::max({policy.min_samples, n, kMinimumSamples}) && measured_ns / 1e6 >= policy.min_ms;
    const double median_now = median(total.device_ns);
    const bool steady = last_median > 0 && std::fabs(median_now - last_median) <= policy.settle_tolerance * median_now;
    settled_checks = steady ? settled_checks + 1 : 0;
    last_median = median_now;
    if (enough && settled_checks >= 2) break;
  }
  return total;
}

void WorkerExecutor::release(const SharedTensor& tensor) {
  const uint64_t id = tensor.buffer().id();
  if (!process_ || !mapped_.count(id)) return;
  mapped_.erase(id);
  request(json{{"type", "unmap"}, {"buffer", id}}, -1, kSmallRequestTimeoutSeconds, "releasing " + tensor.spec().name);
}

}  // namespace harness
