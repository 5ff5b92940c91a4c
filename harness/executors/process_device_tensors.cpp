// Protocol 2: a process submission computes in twins of the harness's
// buffers (harness/device_memory), each handed over once on its memory
// socket and named by its buffer's id in requests. The harness copies a
// call's buffers into their twins as the request goes out and back as the
// reply arrives, in its own process: no file is written or read, and what a
// process writes after its reply is never judged as its answer, and is
// caught before its next request (DeviceTwins::copy_in).
#include <cstddef>

#include "harness/core/dtype.h"
#include "harness/core/error.h"
#include "harness/executors/process_executor.h"

namespace harness {

using nlohmann::json;

namespace {
constexpr double kUnmapTimeoutSeconds = 60;
}

void ProcessExecutor::share(const std::vector<Binding>& tensors, const std::string& what) {
  for (const Binding& b : tensors) {
    SharedBuffer& buffer = b.tensor->buffer();
    if (shared_.count(buffer.id())) continue;
    const DeviceHandle handle = twins_->add(buffer, b.tensor->spec().name, b.access);
    json message = handle.open;
    message["memory"] = buffer.id();
    message["bytes"] = DeviceTwins::twin_bytes(buffer);
    message.erase("offset");  // each tensor's own offset travels in the requests
    try {
      memory_socket_->send(message, handle.fd);
    } catch (const UntrustedInputError& refused) {
      lost(Verdict::error, what + " (handing over the memory of " + b.tensor->spec().name + ")", refused.what());
    }
    shared_.insert(buffer.id());
  }
}

json ProcessExecutor::twin_descriptor(const Binding& binding) const {
  const SharedTensor& tensor = *binding.tensor;
  const auto* data = static_cast<const unsigned char*>(tensor.raw());
  const auto* base = static_cast<const unsigned char*>(tensor.buffer().base());
  const size_t offset = DeviceTwins::kMarginBytes + static_cast<size_t>(data - base);
  return json{{"memory", tensor.buffer().id()},
              {"offset", offset},
              {"dtype", dtype_name(tensor.spec().dtype)},
              {"shape", tensor.spec().shape}};
}

std::set<uint64_t> ProcessExecutor::twin_inodes() const {
  std::set<uint64_t> inodes;
  if (twins_) {
    for (const uint64_t id : shared_) inodes.insert(twins_->inode(id));
  }
  return inodes;
}

void ProcessExecutor::forget_twins() {
  memory_socket_.reset();
  shared_.clear();
  if (twins_) twins_->clear();
}

void ProcessExecutor::release(const SharedTensor& tensor) {
  if (!computes_in_twins()) return;
  const uint64_t id = tensor.buffer().id();
  if (process_ && shared_.count(id)) {
    // The twin is freed only once the process has let go of it; until then
    // its memory witness still leaves it out.
    const std::string what = "releasing the memory of " + tensor.spec().name;
    const json reply = exchange(json{{"type", "unmap"}, {"memory", json::array({id})}}, kUnmapTimeoutSeconds, what);
    if (reply["type"] != "unmapped") {
      lost(Verdict::error, what,
           fmt::format("answered the unmap with {} instead of {{\"type\": \"unmapped\"}}", reply.dump()));
    }
  }
  shared_.erase(id);
  twins_->remove(id);
}

}  // namespace harness
