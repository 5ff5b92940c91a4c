#include "harness/executors/process_executor.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/core/processes.h"
#include "harness/executors/exception_headline.h"
#include "harness/executors/scratch_files.h"
#include "harness/witness/memory_witness.h"
#include "harness_abi.h"

namespace harness {

using nlohmann::json;

namespace {

constexpr double kHelloTimeoutSeconds = 120;
constexpr double kTrimTimeoutSeconds = 60;

std::string client_path() { return std::string(HARNESS_SOURCE_DIR) + "/harness/clients/python"; }

std::string truncated(const std::string& text, size_t max = 200) {
  return text.size() > max ? text.substr(0, max) + "..." : text;
}

// A string field of a reply, "" when absent; anything but a string there is
// the process's error, not the harness's.
std::string string_field(const json& reply, const char* key) {
  const auto it = reply.find(key);
  if (it == reply.end() || it->is_null()) return "";
  if (!it->is_string())
    throw UntrustedInputError(fmt::format("the reply's \"{}\" is {}, not a string", key, truncated(it->dump())));
  return it->get<std::string>();
}

}  // namespace

std::string staging_folder(const ProcessTarget& target) { return target.scratch + ".staged"; }

ProcessExecutor::ProcessExecutor(ProcessTarget target) : target_(std::move(target)), log_(target_.log_path) {
  HARNESS_CHECK(target_.protocol == 1 || target_.protocol == 2, "process protocol {} (1 or 2)", target_.protocol);
  if (computes_in_twins()) {
    HARNESS_CHECK(target_.device_memory, "a protocol 2 process submission without device memory for its twins");
    twins_.emplace(target_.device_memory);
  }
  std::filesystem::create_directories(target_.scratch);
  std::filesystem::create_directories(staging_folder(target_));
}

void ProcessExecutor::stop() {
  if (process_) {
    try {
      channel_->send(json{{"type", "exit"}});
      if (!process_->wait_exit(2.0)) process_->kill_and_reap();
    } catch (...) {
      // The destructor of WorkerProcess kills whatever is left.
    }
  }
  process_.reset();
  channel_.reset();
  forget_twins();
}

void ProcessExecutor::end_case(Verdict verdict) {
  if (verdict != Verdict::pass) stop();
}

ProcessExecutor::~ProcessExecutor() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(target_.scratch, ignored);
  std::filesystem::remove_all(staging_folder(target_), ignored);
}

void ProcessExecutor::lost(Verdict verdict, const std::string& what, const std::string& how) {
  std::string message = fmt::format("the process {} during {}", how, what);
  if (verdict == Verdict::crash && process_ && process_->ended_by_sandbox()) verdict = Verdict::sandbox_violation;
  if (process_) process_->kill_and_reap();
  process_.reset();
  channel_.reset();
  forget_twins();
  const std::string output = log_.tail(kOutputInMessages);
  if (!output.empty()) message += fmt::format("; its last output on stderr: {}", lead_with_exception(output));
  throw VerdictException(verdict, message);
}

json ProcessExecutor::exchange(const json& request, double timeout_s, const std::string& what) {
  std::optional<std::string> line;
  if (channel_->holds_unasked_bytes()) {
    std::optional<std::string> early;
    try {
      early = channel_->receive_line(0);
    } catch (const ChannelClosed&) {
      // a part of a line, then the end of the stream: quoted as a part of a line
    }
    lost(Verdict::error, what,
         fmt::format("wrote '{}' before request {} was sent: a reply answers the request before it, never one "
                     "still to come",
                     truncated(early.value_or("(part of a line)")), request.value("id", json()).dump()));
  }
  try {
    channel_->send(request);
    line = channel_->receive_line(timeout_s);
  } catch (const ChannelClosed& closed) {
    const auto ending = process_->wait_exit(5.0);
    lost(Verdict::crash, what, ending ? *ending : fmt::format("broke the protocol ({})", closed.what()));
  }
  if (!line) lost(Verdict::timeout, what, fmt::format("gave no answer within {:.0f} s and was killed", timeout_s));
  json reply;
  try {
    reply = json::parse(*line);
  } catch (const json::exception&) {
    lost(Verdict::error, what,
         fmt::format("wrote a line that is not the protocol on its standard output (print to standard error "
                     "instead): '{}'",
                     truncated(*line)));
  }
  if (!reply.is_object() || !reply.contains("type") || !reply["type"].is_string()) {
    lost(Verdict::error, what,
         fmt::format("answered with something that is not a protocol message: '{}'", truncated(*line)));
  }
  return reply;
}

void ProcessExecutor::ensure_started() {
  if (load_failure_) throw VerdictException(Verdict::error, *load_failure_);
  if (process_) return;
  WorkerLaunch launch;
  launch.executable = target_.command.front();
  launch.arguments.assign(target_.command.begin() + 1, target_.command.end());
  launch.log_path = log_.path();
  launch.working_directory = target_.folder;
  launch.protocol_on_stdio = true;
  launch.sandbox.readable = {target_.folder, client_path(), target_.command.front()};
  // An interpreter found on PATH is read with its installation; a program
  // of the submission's folder needs nothing beyond that folder.
  if (!path_holds(target_.folder, target_.command.front())) launch.sandbox.programs = {target_.command.front()};
  launch.sandbox.readable.insert(launch.sandbox.readable.end(), target_.include_dirs.begin(),
                                 target_.include_dirs.end());
  launch.sandbox.writable = target_.scratch;
  // The run's folders (every log, every submission's tensors, the staged
  // inputs beside this one's scratch folder) and the project's build (every
  // compiled submission's library).
  launch.sandbox.private_paths = {std::filesystem::path(target_.scratch).parent_path().string(),
                                  std::filesystem::path(target_.log_path).parent_path().string(), HARNESS_BUILD_DIR};
  launch.sandbox.may_start_processes = true;
  const char* python_path = std::getenv("PYTHONPATH");
  launch.environment = {
      fmt::format("HARNESS_PROTOCOL={}", target_.protocol), "HARNESS_SCRATCH=" + target_.scratch,
      // Temporary files (Python's tempfile, Triton's compiler) go where it
      // may write: /tmp is closed to it.
      "TMPDIR=" + target_.scratch,
      "PYTHONPATH=" + client_path() + (python_path && *python_path ? std::string(":") + python_path : "")};
  // OpenBLAS on one thread, whichever build the machine's libblas is, unless
  // the harness's own environment chooses: the threaded build keeps a buffer
  // per thread, touched further by each larger product, which a NumPy
  // kv_cache's memory witness counted as its state (understated_memory on 2
  // cases where the single-threaded build passes every one).
  if (std::getenv("OPENBLAS_NUM_THREADS") == nullptr) launch.environment.push_back("OPENBLAS_NUM_THREADS=1");
  json hello_request{{"type", "hello"},
                     {"protocol", target_.protocol},
                     {"challenge", target_.challenge},
                     {"abi_version", target_.abi_version},
                     {"scratch", target_.scratch},
                     {"declared_ops", target_.declared_ops}};
  if (computes_in_twins()) {
    memory_socket_ = std::make_unique<MemorySocket>();
    launch.fd3 = memory_socket_->child_end();
    launch.environment.push_back("HARNESS_MEMORY_FD=3");
    launch.environment.push_back("HARNESS_ARRAYS=" + target_.arrays);
    hello_request["memory_fd"] = 3;
    hello_request["arrays"] = target_.arrays;
    hello_request["device"] = json{{"kind", target_.device_kind}, {"index", target_.device_index}};
  }
  if (target_.device_kind == "cuda") {
    launch.sandbox.cuda = true;
    // Kernels compiled at run time (Triton's, the driver's PTX JIT) are
    // cached in the one folder it may write, where they count as its memory.
    launch.environment.push_back("TRITON_CACHE_DIR=" + target_.scratch + "/triton-cache");
    launch.environment.push_back("CUDA_CACHE_PATH=" + target_.scratch + "/cuda-cache");
  }
  // A start that fails fails the same way for every case: remember it.
  try {
    process_ = std::make_unique<WorkerProcess>(launch);
    if (memory_socket_) memory_socket_->close_child_end();
    channel_ = std::make_unique<LineChannel>(process_->socket_fd());
    channel_->watch_exit(process_->pid());
    const json hello = exchange(hello_request, kHelloTimeoutSeconds, "start-up (the hello)");
    if (hello["type"] == "error") {
      const std::string why = string_field(hello, "message");
      throw VerdictException(Verdict::error, "the process refused to start: " + (why.empty() ? "(no message)" : why));
    }
    if (hello["type"] != "hello" || !hello.contains("protocol") || hello["protocol"] != target_.protocol ||
        !hello.contains("ops") || !hello["ops"].is_array()) {
      throw VerdictException(Verdict::error, fmt::format("the process answered the hello with {}: expected "
                                                         "{{\"type\": \"hello\", \"protocol\": {}, \"ops\": [...]}}",
                                                         truncated(hello.dump()), target_.protocol));
    }
    for (const auto& op : hello["ops"]) {
      if (op.is_string()) ops_.insert(op.get<std::string>());
    }
    trims_ = hello.value("trim", json()) == true;
  } catch (const UntrustedInputError& failure) {
    load_failure_ = "cannot start the process submission: " + std::string(failure.what());
    if (process_) process_->kill_and_reap();
    process_.reset();
    channel_.reset();
    forget_twins();
    throw VerdictException(Verdict::error, *load_failure_);
  } catch (const VerdictException& failure) {
    load_failure_ = "cannot start the process submission: " + failure.message();
    if (process_) process_->kill_and_reap();
    process_.reset();
    channel_.reset();
    forget_twins();
    throw VerdictException(failure.verdict() == Verdict::crash ? Verdict::crash : Verdict::error, *load_failure_);
  }
}

int32_t ProcessExecutor::status_of(const json& reply, int64_t id, const std::string& what, std::string* message) {
  if (reply["type"] != "reply") {
    lost(Verdict::error, what,
         fmt::format("answered with a message of type {} instead of a reply", reply["type"].dump()));
  }
  if (!reply.contains("id") || reply["id"] != id) {
    lost(Verdict::error, what,
         fmt::format("replied to request {} while request {} was waiting", reply.value("id", json()).dump(), id));
  }
  const std::string status = string_field(reply, "status");
  *message = lead_with_exception(string_field(reply, "message"));
  if (status == "ok") return HARNESS_STATUS_OK;
  if (status == "unsupported") return HARNESS_STATUS_UNSUPPORTED;
  if (status == "error") return HARNESS_STATUS_ERROR;
  if (status == "out_of_memory") return HARNESS_STATUS_OUT_OF_MEMORY;
  throw VerdictException(Verdict::error,
                         fmt::format("{}: the reply's status {} is not ok, unsupported, out_of_memory or error", what,
                                     reply.value("status", json()).dump()));
}

std::optional<int64_t> ProcessExecutor::resident_bytes() {
  ensure_started();
  trim();
  const std::optional<int64_t> held = group_private_bytes(process_->pid(), twin_inodes());
  if (!held) return std::nullopt;
  // Between requests the scratch folder holds none of the harness's files
  // (each call's are deleted as it ends): what is there, the process kept.
  return *held + folder_bytes(target_.scratch);
}

DeviceMemoryReading ProcessExecutor::device_memory() {
  if (target_.device_kind != "cuda") return {std::nullopt, "not a GPU process"};
  if (!process_) return {std::nullopt, "no process running"};
  // What its array library caches after freeing (PyTorch's allocator kept a
  // freed 128 MiB output of layer norm's forward) is not state: given back
  // first, as before a host memory reading.
  trim();
  return device_memory_of_process(process_->pid(), static_cast<unsigned>(target_.device_index));
}

std::optional<PeakWindow> ProcessExecutor::open_peak_window() {
  if (!memory_witness_meaningful()) return std::nullopt;
  ensure_started();
  trim();
  std::optional<PeakWindow> window = harness::open_peak_window(process_->pid());
  // The client loads every input and builds every output: one copy of the
  // call's tensors (its children, if it has any, are not watched).
  if (window) window->contract_copies = 1;
  return window;
}

void ProcessExecutor::trim() {
  if (trims_) {
    // Freed memory its allocator keeps for reuse is not state: a process
    // that offers it gives it back before each reading, as a compiled
    // worker does.
    const json reply =
        exchange(json{{"type", "trim"}}, kTrimTimeoutSeconds, "returning freed memory before a memory reading");
    if (reply["type"] != "trimmed") {
      lost(Verdict::error, "returning freed memory before a memory reading",
           fmt::format("answered the trim with {} instead of {{\"type\": \"trimmed\"}}", truncated(reply.dump())));
    }
  }
}

protocol::CallReply ProcessExecutor::call(const std::string& op, const json& scalars,
                                          const std::vector<Binding>& tensors, double timeout_s) {
  ensure_started();
  protocol::CallReply reply;
  if (!ops_.count(op)) {
    reply.status = HARNESS_STATUS_UNSUPPORTED;
    reply.message = fmt::format("the process does not implement op {} (its hello listed the ops it does)", op);
    return reply;
  }
  const int64_t id = next_id_++;
  const std::string prefix = std::to_string(id);
  if (computes_in_twins()) share(tensors, op);
  json request = call_request(op, scalars, tensors, prefix);
  request["id"] = id;
  const std::set<uint64_t> buffers = buffer_ids_of(tensors);
  if (computes_in_twins()) twins_->copy_in(buffers);
  const int64_t start = monotonic_ns();
  const json answer = exchange(request, timeout_s, op);
  reply.wall_ns = static_cast<double>(monotonic_ns() - start);
  // Read at the reply, whatever it says: what the process writes later is
  // never seen, and the next request's copies overwrite it.
  if (computes_in_twins()) twins_->copy_out(buffers);
  reply.status = status_of(answer, id, op, &reply.message);
  if (reply.status == HARNESS_STATUS_OK) {
    if (!computes_in_twins()) read_outputs(tensors, prefix, op);
    if (answer.contains("scalars") && answer["scalars"].is_object()) reply.scalars = answer["scalars"];
  }
  if (!computes_in_twins()) clear_inputs(tensors, prefix);
  return reply;
}

std::vector<pid_t> ProcessExecutor::processes() {
  return process_ ? processes_in_group(process_->pid()) : std::vector<pid_t>{};
}

}  // namespace harness
