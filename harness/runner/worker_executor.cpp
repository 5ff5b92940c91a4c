#include "harness/runner/worker_executor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>



#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/stats.h"
#include "harness/core/timing_loop.h"
#include "harness/runner/verdict.h"
#include "harness_abi.h"
#include "harness/witness/memory_witness.h"

namespace harness {

using nlohmann::json;

namespace {
constexpr double kSmallRequestTimeoutSeconds = 60;
constexpr size_t kOutputInMessages = 1500;
// A timed batch lasts about this long, so that a request's own cost (its
// messages, binding the sets) amortises over the batch's calls.
constexpr double kBatchTargetNs = 50e6;

// The "type" of a message, or "" when it has none that is a string.
std::string type_of(const json& body) {
  const auto it = body.is_object() ? body.find("type") : body.end();
  return it != body.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string excerpt(const json& body) {
  const std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 200 ? text.substr(0, 200) + "..." : text;
}

// Timings the rest of the harness can use: one device and one wall sample
// per timed call, finite and not negative.
bool usable_samples(const protocol::TimeReply& reply) {
  if (reply.device_ns.size() != reply.wall_ns.size()) return false;
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

WorkerExecutor::~WorkerExecutor() { stop(); }

void WorkerExecutor::stop() {
  if (!process_) return;
  try {
    process_->channel().send(json{{"type", "exit"}});
    if (!process_->wait_exit(2.0)) process_->kill_and_reap();
  } catch (...) {
    // The destructor of WorkerProcess kills whatever is left.
  }
  process_.reset();
  mapped_.clear();
  before_load_.reset();
}

void WorkerExecutor::begin_case() {
  if (target_.device_kind == "cpu") stop();
}

std::string WorkerExecutor::device_clock() const {
  return target_.device_kind == "cuda" ? "cuda-events" : "cpu-monotonic";
}

std::optional<int64_t> WorkerExecutor::resident_bytes() {
  if (target_.device_kind != "cpu" || !memory_witness_meaningful()) return std::nullopt;
  // The request starts a worker if none runs (one per case).
  request(json{{"type", "trim"}}, -1, kSmallRequestTimeoutSeconds, "returning freed memory before a memory reading");
  std::set<uint64_t> tensors;
  for (const auto& [id, mapped] : mapped_) tensors.insert(mapped.inode);
  return resident_private_bytes(process_->pid(), tensors);
}

std::optional<int64_t> WorkerExecutor::resident_before_load() {
  if (!process_ || target_.device_kind != "cpu") return std::nullopt;
  return before_load_;
}

DeviceMemoryReading WorkerExecutor::device_memory() {
  if (target_.device_kind != "cuda") return {std::nullopt, "not a GPU worker"};
  if (!process_) return {std::nullopt, "no worker running"};
  DeviceMemoryReading reading = device_memory_of_process(process_->pid(), static_cast<unsigned>(target_.device_index));
  // The worker holds a device copy of every buffer mapped (CudaBackend::attach):
  // the harness's tensors, not the submission's memory.
  for (const auto& [id, mapped] : mapped_) reading.harness_tensors += device_granules(mapped.bytes);
  return reading;
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

void WorkerExecutor::ensure_started(double timeout_s) {
  if (load_failure_) throw VerdictException(load_failure_->first, load_failure_->second);
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
  process_->channel().watch_exit(process_->pid());
  ++starts_;
  before_load_.reset();
  std::optional<Channel::Message> hello = receive_at_start(timeout_s, "start-up");
  if (hello && type_of(hello->body) == "loading") {
    // No code of the submission has run yet: what the worker holds now is
    // the memory witness's baseline for the case (a store filled by the
    // library's constructors, cpu-hidden-xhat-preloaded, counts).
    if (target_.device_kind == "cpu" && memory_witness_meaningful()) {
      before_load_ = resident_private_bytes(process_->pid(), {});
    }
    try {
      process_->channel().send(json{{"type", "load"}});
    } catch (const ChannelClosed&) {
      const auto ending = process_->wait_exit(5.0);
      worker_lost(Verdict::crash, "start-up", ending.value_or("closed its channel"));
    }
    hello = receive_at_start(timeout_s, "start-up (loading the submission)");
  }
  if (!hello) {
    // Loading runs the library's constructors, which hang the same way every
    // time: remember it, so each later case costs nothing instead of another
    // timeout.
    process_->kill_and_reap();
    load_failure_ = {Verdict::timeout, fmt::format("the worker did not finish loading the submission within {:.0f} s "
                                                   "(a constructor of the library that never returns?)", timeout_s)};
    worker_lost(Verdict::timeout, "start-up", fmt::format("did not start within {:.0f} s", timeout_s));
  }
  const std::string type = type_of(hello->body);
  if (type == "fatal") {
    // Loading fails the same way every time: remember it instead of
    // restarting the worker for every remaining case.
    const json why = hello->body.value("message", json());
    load_failure_ = {Verdict::error, "cannot load the submission: " + (why.is_string() ? why.get<std::string>() : excerpt(why))};
    process_->wait_exit(5.0);
    process_.reset();
    throw VerdictException(Verdict::error, load_failure_->second);
  }
  if (type != "hello") {
    process_->kill_and_reap();
    worker_lost(Verdict::error, "start-up", fmt::format("sent {} instead of hello", excerpt(hello->body)));
  }
}

std::optional<Channel::Message> WorkerExecutor::receive_at_start(double timeout_s, const std::string& stage) {
  try {
    return process_->channel().receive(timeout_s);
  } catch (const MalformedMessage& garbled) {
    malformed(stage, json(), garbled.what());
  } catch (const ChannelClosed&) {
    const auto ending = process_->wait_exit(5.0);
    worker_lost(Verdict::crash, stage, ending.value_or("closed its channel"));
  }
}

json WorkerExecutor::request(const json& message, int fd, double timeout_s, const std::string& what) {
  ensure_started(timeout_s);
  std::optional<Channel::Message> reply;
  try {
    process_->channel().send(message, fd);
    reply = process_->channel().receive(timeout_s);
  } catch (const MalformedMessage& garbled) {
    malformed(what, json(), garbled.what());
  } catch (const ChannelClosed&) {
    const auto ending = process_->wait_exit(5.0);
    worker_lost(Verdict::crash, what, ending ? *ending : process_->kill_and_reap());
  }
  if (!reply) {
    process_->kill_and_reap();
    worker_lost(Verdict::timeout, what, fmt::format("gave no answer within {:.0f} s and was killed", timeout_s));
  }
  if (reply->fd >= 0) ::close(reply->fd);
  if (type_of(reply->body) != "reply") malformed(what, reply->body, "it is not a reply");
  return reply->body;
}

void WorkerExecutor::malformed(const std::string& what, const json& body, const std::string& problem) {
  // Whatever wrote it (a submission writing on the worker's socket), the
  // channel can no longer be trusted to pair requests and replies: the
  // worker goes, and the case is the submission's error.
  if (process_) process_->kill_and_reap();
  worker_lost(Verdict::error, what, fmt::format("sent a malformed reply ({}): {}", problem, excerpt(body)));
}

template <class Reply>
Reply WorkerExecutor::decode(const json& body, const std::string& what) {
  try {
    return body.get<Reply>();
  } catch (const std::exception& e) {
    malformed(what, body, e.what());
  }
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
    const auto ok = reply.find("ok");
    if (ok == reply.end() || !ok->is_boolean() || !ok->get<bool>()) {
      const auto failed = decode<protocol::CallReply>(reply, what);
      raise_fault(failed.fault, what);
    }
    struct stat file{};
    HARNESS_CHECK_ERRNO(::fstat(buffer.fd(), &file), "fstat of the buffer of {}", b.tensor->spec().name);
    mapped_[buffer.id()] = Mapped{static_cast<uint64_t>(file.st_ino), static_cast<uint64_t>(buffer.total_bytes())};
  }
}

protocol::CallReply WorkerExecutor::call(const std::string& op, const json& scalars,
                                         const std::vector<Binding>& tensors, double timeout_s) {
  ensure_started(timeout_s);
  map(tensors, op);
  const json body = request(json{{"type", "call"}, {"op", op}, {"scalars", scalars}, {"tensors", bindings_to_json(tensors)}},
                            -1, timeout_s, op);
  const auto reply = decode<protocol::CallReply>(body, op);
  raise_fault(reply.fault, op);
  return reply;
}

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
    total.witnessed.push_back(protocol::WitnessedRequest{last_batch_ns, warmup, calls, 0.0, 0.0});
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

void WorkerExecutor::release(const SharedTensor& tensor) {
  const uint64_t id = tensor.buffer().id();
  if (!process_ || !mapped_.count(id)) return;
  mapped_.erase(id);
  request(json{{"type", "unmap"}, {"buffer", id}}, -1, kSmallRequestTimeoutSeconds, "releasing " + tensor.spec().name);
}

}  // namespace harness
