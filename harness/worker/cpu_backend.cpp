#include "harness/core/clock.h"
#include "harness/core/dtype.h"
#include "harness/core/error.h"
#include "harness/worker/device_backend.h"

namespace harness {

namespace {

class CpuTimer : public CallTimer {
 public:
  void start() override { start_ = monotonic_ns(); }
  void stop() override { stop_ = monotonic_ns(); }
  double elapsed_ns() override { return static_cast<double>(stop_ - start_); }

 private:
  int64_t start_ = 0;
  int64_t stop_ = 0;
};

// The submission works in the shared mapping itself: no copies, and the
// guard bands are the real neighbours of its buffers.
class CpuBackend : public DeviceBackend {
 public:
  std::string describe() const override { return "cpu"; }
  void* stream() override { return nullptr; }
  void attach(MappedBuffer&) override {}
  // The stand-in device's twin is host memory, mapped from its descriptor.
  void open(MappedBuffer& buffer, const nlohmann::json& memory) override {
    const std::string kind = memory.value("kind", "");
    HARNESS_CHECK(kind == "stand-in" && buffer.host, "a cpu worker cannot open device memory of kind '{}'{}", kind,
                  buffer.host ? "" : " (no descriptor came with it)");
  }
  void detach(MappedBuffer&) override {}
  void* data_pointer(MappedBuffer& buffer) override {
    return buffer.host->base() + buffer.offset + SharedBuffer::data_offset();
  }
  void upload(MappedBuffer&) override {}
  void download(MappedBuffer&) override {}
  void poison(MappedBuffer& buffer, const protocol::TensorBinding& binding) override {
    fill_poison(data_pointer(buffer), binding.elements, binding.dtype);
  }
  void synchronize() override {}
  std::unique_ptr<CallTimer> make_timer() override { return std::make_unique<CpuTimer>(); }
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace harness
