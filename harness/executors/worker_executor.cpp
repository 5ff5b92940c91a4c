#include "harness/executors/worker_executor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <utility>

#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/core/processes.h"
#include "harness/definitions/verdict.h"
#include "harness/witness/memory_witness.h"

namespace harness {

using nlohmann::json;

namespace {
constexpr double kSmallRequestTimeoutSeconds = 60;

// The "type" of a message, or "" when it has none that is a string.
std::string type_of(const json& body) {
  const auto it = body.is_object() ? body.find("type") : body.end();
  return it != body.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string excerpt(const json& body) {
  const std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 200 ? text.substr(0, 200) + "..." : text;
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

WorkerExecutor::WorkerExecutor(WorkerTarget target) : target_(std::move(target)), log_(target_.log_path) {
  if (target_.device_memory) twins_.emplace(target_.device_memory);
}

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
  if (twins_) twins_->clear();
  before_load_.reset();
}

void WorkerExecutor::begin_case() {
  if (target_.device_kind == "cpu" || target_.sanitizer) stop();
}

std::vector<Finding> WorkerExecutor::sanitizer_findings() {
  if (!target_.sanitizer || sanitizer_report_.empty()) return {};
  stop();  // the sanitizer writes its report as the worker exits
  const std::string path = std::exchange(sanitizer_report_, "");
  std::string report;
  try {
    report = read_text_file(path);
  } catch (const std::exception& e) {
    return {Finding{Verdict::harness_error,
                    fmt::format("compute-sanitizer left no report readable at {}: {}", path, e.what())}};
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  const auto finding = first_sanitizer_finding(target_.sanitizer->tool, report);
  if (!finding) return {};
  return {Finding{finding->verdict, finding->message}};
}

void WorkerExecutor::end_case(Verdict verdict) {
  if (verdict != Verdict::pass) stop();
}

std::string WorkerExecutor::device_clock() const {
  return target_.device_kind == "cuda" ? "cuda-events" : "cpu-monotonic";
}

std::optional<int64_t> WorkerExecutor::resident_bytes() {
  // Under a sanitizer the process is the sanitizer's, its memory too.
  if (!memory_witness_meaningful() || target_.sanitizer) return std::nullopt;
  // The request starts a worker if none runs (one per case).
  request(json{{"type", "trim"}}, -1, kSmallRequestTimeoutSeconds, "returning freed memory before a memory reading");
  std::set<uint64_t> tensors;
  for (const auto& [id, mapped] : mapped_) tensors.insert(mapped.inode);
  return resident_private_bytes(process_->pid(), tensors);
}

std::optional<PeakWindow> WorkerExecutor::open_peak_window() {
  if (target_.device_kind != "cpu" || !memory_witness_meaningful() || target_.sanitizer) return std::nullopt;
  // Freed memory the allocator kept would hide the call's own allocations.
  request(json{{"type", "trim"}}, -1, kSmallRequestTimeoutSeconds, "returning freed memory before a peak window");
  return harness::open_peak_window(process_->pid());
}

std::optional<int64_t> WorkerExecutor::resident_before_load() {
  if (!process_ || target_.device_kind != "cpu" || target_.sanitizer) return std::nullopt;
  return before_load_;
}

DeviceMemoryReading WorkerExecutor::device_memory() {
  if (target_.device_kind != "cuda") return {std::nullopt, "not a GPU worker"};
  if (!process_) return {std::nullopt, "no worker running"};
  if (target_.sanitizer) return {std::nullopt, "the worker ran under compute-sanitizer"};
  DeviceMemoryReading reading = device_memory_of_process(process_->pid(), static_cast<unsigned>(target_.device_index));
  // The worker holds a device copy of every buffer mapped (CudaBackend::attach):
  // the harness's tensors, not the submission's memory. Twins the harness
  // owns are its own context's allocations, never subtracted from the
  // worker's (whether the driver counts an opened twin against the worker is
  // to be read on a GPU).
  if (!harness_owns_device_memory()) {
    for (const auto& [id, mapped] : mapped_) reading.harness_tensors += device_granules(mapped.bytes);
  }
  return reading;
}

std::string WorkerExecutor::drain_output(size_t max_bytes) { return log_.drain(max_bytes); }

void WorkerExecutor::worker_lost(Verdict verdict, const std::string& what, const std::string& how) {
  std::string message = fmt::format("the worker {} during {}", how, what);
  if (verdict == Verdict::crash && process_ && process_->ended_by_sandbox()) verdict = Verdict::sandbox_violation;
  process_.reset();
  mapped_.clear();
  if (twins_) twins_->clear();
  const std::string output = log_.tail(kOutputInMessages);
  if (!output.empty()) message += fmt::format("; its last output: {}", output);
  throw VerdictException(verdict, message);
}

void WorkerExecutor::ensure_started(double timeout_s) {
  if (load_failure_) throw VerdictException(load_failure_->first, load_failure_->second);
  if (process_) return;
  WorkerLaunch launch;
  launch.executable = target_.worker_executable;
  launch.arguments = {"--challenge", target_.challenge,   "--library",      target_.library,
                      "--device",    target_.device_kind, "--device-index", std::to_string(target_.device_index)};
  launch.log_path = target_.log_path;
  launch.sandbox.readable = {target_.worker_executable, target_.library,
                             std::filesystem::path(target_.library).parent_path().string()};
  launch.sandbox.cuda = target_.device_kind == "cuda";
  if (target_.sanitizer) {
    sanitizer_report_ = fmt::format("{}.sanitizer-{}.txt", target_.log_path, starts_ + 1);
    std::error_code ignored;
    std::filesystem::remove(sanitizer_report_, ignored);
    launch.arguments = sanitizer_arguments(*target_.sanitizer, sanitizer_report_, launch.executable, launch.arguments);
    launch.executable = target_.sanitizer->program;
    launch.sandbox.readable.push_back(target_.sanitizer->program);
    launch.sandbox.under_sanitizer = true;
  }
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
                                                   "(a constructor of the library that never returns?)",
                                                   timeout_s)};
    worker_lost(Verdict::timeout, "start-up", fmt::format("did not start within {:.0f} s", timeout_s));
  }
  const std::string type = type_of(hello->body);
  if (type == "fatal") {
    // Loading fails the same way every time: remember it instead of
    // restarting the worker for every remaining case.
    const json why = hello->body.value("message", json());
    load_failure_ = {Verdict::error,
                     "cannot load the submission: " + (why.is_string() ? why.get<std::string>() : excerpt(why))};
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

// WorkerExecutor::time (worker_timing.cpp) decodes these too.
template protocol::CallReply WorkerExecutor::decode<protocol::CallReply>(const json&, const std::string&);
template protocol::TimeReply WorkerExecutor::decode<protocol::TimeReply>(const json&, const std::string&);

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
    SharedBuffer& buffer = b.tensor->buffer();
    if (mapped_.count(buffer.id())) continue;
    json message{{"type", "map"}, {"buffer", buffer.id()}, {"bytes", buffer.total_bytes()}};
    int fd = buffer.fd();
    uint64_t inode = 0;
    if (twins_) {
      // The worker gets the twin, never the harness's buffer.
      const DeviceHandle handle = twins_->add(buffer, b.tensor->spec().name, b.access);
      message["bytes"] = DeviceTwins::twin_bytes(buffer);
      message["memory"] = handle.open;
      fd = handle.fd;
      inode = twins_->inode(buffer.id());
    } else {
      struct stat file {};
      HARNESS_CHECK_ERRNO(::fstat(buffer.fd(), &file), "fstat of the buffer of {}", b.tensor->spec().name);
      inode = static_cast<uint64_t>(file.st_ino);
    }
    const json reply =
        request(message, fd, kSmallRequestTimeoutSeconds, what + " (mapping " + b.tensor->spec().name + ")");
    const auto ok = reply.find("ok");
    if (ok == reply.end() || !ok->is_boolean() || !ok->get<bool>()) {
      const auto failed = decode<protocol::CallReply>(reply, what);
      raise_fault(failed.fault, what);
    }
    mapped_[buffer.id()] = Mapped{inode, static_cast<uint64_t>(buffer.total_bytes())};
  }
}

void WorkerExecutor::copy_twins(const std::set<uint64_t>& ids, bool to_device) {
  HARNESS_CHECK(twins_, "copies of device twins for a worker that computes in memory of its own");
  if (to_device) {
    twins_->copy_in(ids);
  } else {
    twins_->copy_out(ids);
  }
}

protocol::CallReply WorkerExecutor::call(const std::string& op, const json& scalars,
                                         const std::vector<Binding>& tensors, double timeout_s) {
  ensure_started(timeout_s);
  map(tensors, op);
  const std::set<uint64_t> ids = buffer_ids_of(tensors);
  if (harness_owns_device_memory()) copy_twins(ids, true);
  const json body =
      request(json{{"type", "call"}, {"op", op}, {"scalars", scalars}, {"tensors", bindings_to_json(tensors)}}, -1,
              timeout_s, op);
  // Read at the reply: what the worker writes later is never seen, and the
  // next request's copies overwrite it.
  if (harness_owns_device_memory()) copy_twins(ids, false);
  const auto reply = decode<protocol::CallReply>(body, op);
  raise_fault(reply.fault, op);
  return reply;
}

void WorkerExecutor::release(const SharedTensor& tensor) {
  const uint64_t id = tensor.buffer().id();
  if (process_ && mapped_.count(id)) {
    mapped_.erase(id);
    request(json{{"type", "unmap"}, {"buffer", id}}, -1, kSmallRequestTimeoutSeconds,
            "releasing " + tensor.spec().name);
  }
  // Freed once the worker has let go of it.
  if (twins_) twins_->remove(id);
}

std::vector<pid_t> WorkerExecutor::processes() {
  return process_ ? processes_in_group(process_->pid()) : std::vector<pid_t>{};
}

}  // namespace harness
