// Where a submission's tensors live while it runs, and how its calls are
// synchronised and timed: host memory and the monotonic clock for cpu
// submissions, a device mirror of every shared buffer and CUDA events for
// cuda ones.
#pragma once

#include <memory>
#include <string>

#include "harness/core/error.h"
#include "harness/ipc/protocol.h"
#include "harness/memory/shared_buffer.h"

namespace harness {

// An error the device reported; `sticky` when the context is unusable and
// the worker must exit after reporting it.
class DeviceFault : public HarnessError {
 public:
  DeviceFault(const std::string& message, bool sticky) : HarnessError(message), sticky_(sticky) {}
  bool sticky() const { return sticky_; }

 private:
  bool sticky_;
};

// A shared buffer as the worker holds it: the host mapping and, on a GPU, a
// device copy of the whole buffer, guard bands included. Where the harness
// owns the device memory (harness/device_memory) the worker holds only the
// twin the harness sent: the stand-in's as `host`, a CUDA one as `device`;
// the harness copies it, and the worker never does.
struct MappedBuffer {
  std::unique_ptr<SharedBuffer> host;
  void* device = nullptr;
  bool harness_owned = false;
  // Where the buffer (its front guard) starts in the memory mapped: past
  // the margin the harness keeps around a twin, 0 otherwise.
  size_t offset = 0;
};

// Times one call at a time: start() just before it, stop() just after.
class CallTimer {
 public:
  virtual ~CallTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Duration of the last start/stop pair; valid after DeviceBackend::synchronize().
  virtual double elapsed_ns() = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::string describe() const = 0;
  // Passed to the submission as its `stream` argument.
  virtual void* stream() = 0;
  virtual void attach(MappedBuffer& buffer) = 0;
  // Opens a twin the harness owns, described by the "memory" of its map
  // request; throws HarnessError for a kind this backend cannot open.
  virtual void open(MappedBuffer& buffer, const nlohmann::json& memory) = 0;
  virtual void detach(MappedBuffer& buffer) = 0;
  // Pointer to the data region, as the submission must see it.
  virtual void* data_pointer(MappedBuffer& buffer) = 0;
  // Whole buffers, guard bands included, so that the harness can check them.
  virtual void upload(MappedBuffer& buffer) = 0;
  virtual void download(MappedBuffer& buffer) = 0;
  // Fills the data region of one output with its poison pattern.
  virtual void poison(MappedBuffer& buffer, const protocol::TensorBinding& binding) = 0;
  // Waits for all work the submission launched, on any stream; throws
  // DeviceFault on a device error.
  virtual void synchronize() = 0;
  virtual std::unique_ptr<CallTimer> make_timer() = 0;
};

std::unique_ptr<DeviceBackend> make_cpu_backend();
// Throws HarnessError when the worker was built without CUDA or the device
// cannot be used.
std::unique_ptr<DeviceBackend> make_cuda_backend(int device_index);

}  // namespace harness
