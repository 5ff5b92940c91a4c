// The worker's request loop: maps shared buffers, calls the submission
// through its challenge's adapter, times it, and replies. One session per
// worker process; the harness restarts the process after a crash.
#pragma once

#include <map>
#include <memory>

#include "harness/ipc/channel.h"
#include "harness/timing/timing_loop.h"
#include "harness/worker/abi_adapter.h"
#include "harness/worker/device_backend.h"

namespace harness {

class WorkerSession {
 public:
  WorkerSession(Channel& channel, DeviceBackend& backend, AbiAdapter& adapter);
  // Serves requests until "exit" or until the harness goes away. Returns the
  // process exit code: 0, or 3 after a sticky device fault.
  int serve();

 private:
  nlohmann::json handle(const Channel::Message& message, bool* stop, bool* sticky);
  nlohmann::json map_buffer(const nlohmann::json& request, int fd);
  nlohmann::json call(const nlohmann::json& request);
  nlohmann::json time(const nlohmann::json& request);
  struct TimedSet;
  TimedCall timed_call(TimedSet& set, CallTimer& timer);
  // Pointers for the submission, after uploading every bound buffer.
  // `upload`: copy each tensor's buffer to the device first (not for a
  // staged timing, whose sets an "upload" request already copied).
  OpArguments bind(const nlohmann::json& scalars, const std::vector<protocol::TensorBinding>& tensors, bool upload);
  nlohmann::json copy_buffers(const nlohmann::json& request, bool to_device);
  void download_own(const std::vector<protocol::TensorBinding>& tensors);
  MappedBuffer& buffer(uint64_t id);

  Channel& channel_;
  DeviceBackend& backend_;
  AbiAdapter& adapter_;
  std::map<uint64_t, MappedBuffer> buffers_;
};

}  // namespace harness
