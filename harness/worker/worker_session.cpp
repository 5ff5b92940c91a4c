#include "harness/worker/worker_session.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <exception>

#include "harness/core/clock.h"
#include "harness/timing/timing_loop.h"

namespace harness {

using nlohmann::json;

namespace {

json fault_reply(const std::string& kind, bool sticky, const std::string& message) {
  protocol::CallReply reply;
  reply.status = -1;
  reply.fault = protocol::Fault{kind, sticky, message};
  return reply;
}

std::vector<protocol::TensorBinding> bindings_of(const json& list) {
  return list.get<std::vector<protocol::TensorBinding>>();
}

}  // namespace

WorkerSession::WorkerSession(Channel& channel, DeviceBackend& backend, AbiAdapter& adapter)
    : channel_(channel), backend_(backend), adapter_(adapter) {}

int WorkerSession::serve() {
  while (true) {
    std::optional<Channel::Message> message;
    try {
      message = channel_.receive(-1);
    } catch (const ChannelClosed&) {
      return 0;  // the harness is gone; nothing left to do
    }
    bool stop = false;
    bool sticky = false;
    const json reply = handle(*message, &stop, &sticky);
    if (stop) return 0;
    try {
      channel_.send(reply);
    } catch (const ChannelClosed&) {
      return 0;
    }
    if (sticky) return 3;  // the device context is poisoned: the harness starts a new worker
  }
}

json WorkerSession::handle(const Channel::Message& message, bool* stop, bool* sticky) {
  const std::string type = message.body.value("type", "");
  try {
    if (type == "exit") {
      *stop = true;
      return json();
    }
    if (type == "map") return map_buffer(message.body, message.fd);
    if (type == "unmap") {
      const uint64_t id = message.body.at("buffer").get<uint64_t>();
      auto it = buffers_.find(id);
      if (it != buffers_.end()) {
        backend_.detach(it->second);
        buffers_.erase(it);
      }
      return json{{"type", "reply"}, {"ok", true}};
    }
    if (type == "trim") {
      // Before the harness reads this process's resident memory (the memory
      // witness): give memory freed earlier back to the system, so that
      // what remains is what is held.
      ::malloc_trim(0);
      return json{{"type", "reply"}, {"ok", true}};
    }
    if (type == "upload") return copy_buffers(message.body, true);
    if (type == "download") return copy_buffers(message.body, false);
    if (type == "call") return call(message.body);
    if (type == "time") return time(message.body);
    return fault_reply("worker_error", false, fmt::format("unknown request type '{}'", type));
  } catch (const DeviceFault& fault) {
    *sticky = fault.sticky();
    return fault_reply("cuda_error", fault.sticky(), fault.what());
  } catch (const std::exception& error) {
    return fault_reply("worker_error", false, error.what());
  }
}

json WorkerSession::map_buffer(const json& request, int fd) {
  const uint64_t id = request.at("buffer").get<uint64_t>();
  const size_t bytes = request.at("bytes").get<size_t>();
  MappedBuffer mapped;
  const auto memory = request.find("memory");
  if (memory == request.end()) {
    HARNESS_CHECK(fd >= 0, "map request for buffer {} arrived without a descriptor", id);
    mapped.host = std::make_unique<SharedBuffer>(id, fd, bytes);
    backend_.attach(mapped);
  } else {
    // A twin the harness owns: a descriptor comes only with the stand-in's.
    if (fd >= 0) mapped.host = std::make_unique<SharedBuffer>(id, fd, bytes);
    mapped.harness_owned = true;
    mapped.offset = memory->value("offset", size_t{0});
    HARNESS_CHECK(mapped.offset < bytes, "buffer {} starts {} bytes into a twin of {}", id, mapped.offset, bytes);
    backend_.open(mapped, *memory);
  }
  buffers_[id] = std::move(mapped);
  return json{{"type", "reply"}, {"ok", true}};
}

MappedBuffer& WorkerSession::buffer(uint64_t id) {
  auto it = buffers_.find(id);
  HARNESS_CHECK(it != buffers_.end(), "buffer {} was never mapped", id);
  return it->second;
}

json WorkerSession::copy_buffers(const json& request, bool to_device) {
  for (const json& id : request.at("buffers")) {
    MappedBuffer& mapped = buffer(id.get<uint64_t>());
    HARNESS_CHECK(!mapped.harness_owned, "buffer {} is the harness's: it copies it itself", id.get<uint64_t>());
    if (to_device) {
      backend_.upload(mapped);
    } else {
      backend_.download(mapped);
    }
  }
  backend_.synchronize();
  return json{{"type", "reply"}, {"ok", true}};
}

OpArguments WorkerSession::bind(const json& scalars, const std::vector<protocol::TensorBinding>& tensors, bool upload) {
  OpArguments arguments;
  arguments.scalars = &scalars;
  arguments.stream = backend_.stream();
  for (const auto& t : tensors) {
    MappedBuffer& mapped = buffer(t.buffer);
    if (upload && !mapped.harness_owned) backend_.upload(mapped);
    arguments.tensors[t.name] = backend_.data_pointer(mapped);
  }
  return arguments;
}

json WorkerSession::call(const json& request) {
  const std::string op = request.at("op").get<std::string>();
  const json& scalars = request.at("scalars");
  const auto tensors = bindings_of(request.at("tensors"));
  OpArguments arguments = bind(scalars, tensors, true);
  BoundCall bound = adapter_.prepare(op, arguments);
  backend_.synchronize();

  protocol::CallReply reply;
  const int64_t start = monotonic_ns();
  try {
    reply.status = bound.invoke();
  } catch (const std::exception& e) {
    return fault_reply("abi_violation", false, fmt::format("a C++ exception escaped the C ABI: {}", e.what()));
  } catch (...) {
    return fault_reply("abi_violation", false, "an exception escaped the C ABI");
  }
  backend_.synchronize();
  reply.wall_ns = static_cast<double>(monotonic_ns() - start);
  if (reply.status != 0) reply.message = adapter_.last_error();
  if (reply.status == 0 && bound.results) reply.scalars = bound.results();
  download_own(tensors);
  return reply;
}

// Results back to the shared buffers, of those the worker copies itself.
void WorkerSession::download_own(const std::vector<protocol::TensorBinding>& tensors) {
  for (const auto& t : tensors) {
    MappedBuffer& mapped = buffer(t.buffer);
    if (!mapped.harness_owned) backend_.download(mapped);
  }
}

// The calls of one timed set: bound once, its outputs poisoned again before
// every call but the first after the harness poisoned them itself.
struct WorkerSession::TimedSet {
  BoundCall call;
  std::vector<std::pair<MappedBuffer*, protocol::TensorBinding>> outputs;
  bool poisoned = false;
};

json WorkerSession::time(const json& request) {
  const std::string op = request.at("op").get<std::string>();
  const json& scalars = request.at("scalars");
  // How many calls is the harness's decision, not the worker's: its clock
  // around the request then bounds their time (the timing witness).
  const auto batch = request.at("batch").get<protocol::TimingBatch>();
  std::vector<std::vector<protocol::TensorBinding>> set_bindings;
  for (const auto& set : request.at("sets")) set_bindings.push_back(bindings_of(set));
  // Copies to and from the device are outside every call's time: reported
  // so that the harness's witness can account for them. A staged batch has
  // none: its sets were uploaded by the request before.
  const int64_t setup_start = monotonic_ns();
  std::vector<TimedSet> sets;
  for (const auto& bindings : set_bindings) {
    TimedSet set{adapter_.prepare(op, bind(scalars, bindings, !batch.staged)), {}, batch.outputs_poisoned};
    for (const auto& t : bindings) {
      if (protocol::is_written(t.access)) set.outputs.emplace_back(&buffer(t.buffer), t);
    }
    sets.push_back(std::move(set));
  }
  backend_.synchronize();
  auto timer = backend_.make_timer();
  const int64_t loop_start = monotonic_ns();
  protocol::TimeReply reply;
  try {
    reply = run_timing_batch(
        sets.size(), [&](size_t s) { return timed_call(sets[s], *timer); }, batch);
  } catch (const DeviceFault&) {
    throw;
  } catch (const std::exception& e) {
    return fault_reply("abi_violation", false, fmt::format("a C++ exception escaped the C ABI: {}", e.what()));
  }
  const int64_t loop_end = monotonic_ns();
  if (reply.status != 0) reply.message = adapter_.last_error();
  if (!batch.staged) {
    for (const auto& tensors : set_bindings) download_own(tensors);
  }
  reply.setup_ns = static_cast<double>((loop_start - setup_start) + (monotonic_ns() - loop_end));
  return reply;
}

// Poison, synchronise so the host clock starts on an idle device, then time
// the call alone. The host clock also spans the short hold the CUDA timer
// queues ahead of the call (CudaTimer): it is left in, so that the claims
// add up to what the harness's own clock sees around the batch.
TimedCall WorkerSession::timed_call(TimedSet& set, CallTimer& timer) {
  if (!set.poisoned) {
    for (auto& [mapped, binding] : set.outputs) backend_.poison(*mapped, binding);
  }
  set.poisoned = false;
  backend_.synchronize();
  TimedCall timed;
  const int64_t wall_start = monotonic_ns();
  timer.start();
  timed.status = set.call.invoke();
  timer.stop();
  backend_.synchronize();
  timed.wall_ns = static_cast<double>(monotonic_ns() - wall_start);
  if (timed.status == 0) timed.device_ns = timer.elapsed_ns();
  return timed;
}

}  // namespace harness
