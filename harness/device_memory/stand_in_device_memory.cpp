#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "harness/core/bulk_bytes.h"
#include "harness/core/error.h"
#include "harness/device_memory/device_memory.h"
#include "harness/memory/shared_buffer.h"

namespace harness {

namespace {

// A sealed memfd of its own: memory the worker reaches only through the
// descriptor the harness sends, never the harness's shared buffer itself.
class StandInTwin : public DeviceTwin {
 public:
  StandInTwin(size_t bytes, const std::string& what)
      : memory_(create_sealed_memfd(bytes, "harness-device-twin")), bytes_(bytes), what_(what) {
    struct stat file {};
    HARNESS_CHECK_ERRNO(::fstat(memory_.fd, &file), "fstat of the stand-in device twin of {}", what_);
    inode_ = static_cast<uint64_t>(file.st_ino);
  }
  ~StandInTwin() override {
    ::munmap(memory_.base, bytes_);
    ::close(memory_.fd);
  }
  StandInTwin(const StandInTwin&) = delete;
  StandInTwin& operator=(const StandInTwin&) = delete;

  size_t bytes() const override { return bytes_; }
  DeviceHandle handle() const override { return {{{"kind", "stand-in"}}, memory_.fd}; }
  uint64_t inode() const override { return inode_; }
  void upload(const void* host, size_t offset, size_t bytes) override {
    check_twin_range("stand-in", "upload", what_, offset, bytes, bytes_);
    copy_bytes(memory_.base + offset, host, bytes);
  }
  void download(void* host, size_t offset, size_t bytes) override {
    check_twin_range("stand-in", "download", what_, offset, bytes, bytes_);
    copy_bytes(host, memory_.base + offset, bytes);
  }
  bool holds(const void* expected, size_t offset, size_t bytes) override {
    check_twin_range("stand-in", "comparison", what_, offset, bytes, bytes_);
    return same_bytes(memory_.base + offset, expected, bytes);
  }

 private:
  SealedMemfd memory_;
  size_t bytes_;
  std::string what_;
  uint64_t inode_ = 0;
};

class StandInDeviceMemory : public DeviceMemory {
 public:
  std::string describe() const override { return "stand-in device (host memory the harness owns)"; }
  std::unique_ptr<DeviceTwin> allocate(size_t bytes, const std::string& what) override {
    return std::make_unique<StandInTwin>(bytes, what);
  }
};

}  // namespace

std::unique_ptr<DeviceMemory> make_stand_in_device_memory() { return std::make_unique<StandInDeviceMemory>(); }

}  // namespace harness
