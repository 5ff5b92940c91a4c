#include "harness/runner/worker_executor.h"

#include <unistd.h>

#include <filesystem>


#include "harness/core/error.h"
#include "harness/runner/verdict.h"

namespace harness {

using nlohmann::json;

namespace {
constexpr double kStartTimeoutSeconds = 120;  // loading a library and creating a CUDA context
constexpr double kSmallRequestTimeoutSeconds = 60;
constexpr size_t kOutputInMessages = 1500;

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

std::string WorkerExecutor::drain_output(size_t max_bytes) { return log_.drain(max_bytes); }

void WorkerExecutor::worker_lost(Verdict verdict, const std::string& what, const std::string& how) {
  std::string message = fmt::format("the worker {} during {}", how, what);
  if (verdict == Verdict::crash && process_ && process_->ended_by_sandbox()) verdict = Verdict::sandbox_violation;
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
  launch.sandbox.readable = {target_.worker_executable, target_.library,
                             std::filesystem::path(target_.library).parent_path().string()};
  launch.sandbox.cuda = target_.device_kind == "cuda";
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
  const json body = request(json{{"type", "time"}, {"op", op}, {"scalars", scalars}, {"sets", set_list}, {"policy", policy}},
                            -1, timeout_s, what);
  if (body.contains("device_ns")) return body.get<protocol::TimeReply>();
  protocol::CallReply failed = body.get<protocol::CallReply>();
  raise_fault(failed.fault, what);
  HARNESS_FAIL("the worker answered {} with neither samples nor a fault", what);
}

void WorkerExecutor::release(const SharedTensor& tensor) {
  const uint64_t id = tensor.buffer().id();
  if (!process_ || !mapped_.count(id)) return;
  mapped_.erase(id);
  request(json{{"type", "unmap"}, {"buffer", id}}, -1, kSmallRequestTimeoutSeconds, "releasing " + tensor.spec().name);
}

}  // namespace harness
