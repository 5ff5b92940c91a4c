// DeviceTwins (harness/executors/device_twins.h) on the stand-in device: a
// buffer's twin between two margins of this run's pattern; copies in and
// out; a changed margin byte is out_of_bounds_write naming the tensor, the
// side and the distance from its data.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "harness/definitions/verdict.h"
#include "harness/executors/device_twins.h"

namespace harness {
namespace {

constexpr size_t kData = 4096 * 3;

// What a worker holds: the whole twin, mapped from the handle's descriptor.
struct WorkerView {
  explicit WorkerView(const DeviceHandle& handle, size_t bytes) : bytes_(bytes) {
    void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, handle.fd, 0);
    EXPECT_NE(mapped, MAP_FAILED);
    base = static_cast<unsigned char*>(mapped);
    data = base + handle.open.at("offset").get<size_t>() + SharedBuffer::data_offset();
  }
  ~WorkerView() { ::munmap(base, bytes_); }
  unsigned char* base = nullptr;
  unsigned char* data = nullptr;

 private:
  size_t bytes_;
};

std::string margin_failure(DeviceTwins& twins, uint64_t id) {
  try {
    twins.copy_out({id});
  } catch (const VerdictException& e) {
    EXPECT_EQ(e.verdict(), Verdict::out_of_bounds_write);
    return e.message();
  }
  return "";
}

TEST(DeviceTwins, TheWorkerComputesInTheTwinAndTheHarnessCopiesBothWays) {
  DeviceTwins twins(make_stand_in_device_memory());
  SharedBuffer host(7, kData);
  std::memset(host.data(), 0x11, kData);
  const DeviceHandle handle = twins.add(host, "probs");
  EXPECT_EQ(handle.open.at("offset").get<size_t>(), DeviceTwins::kMarginBytes);
  WorkerView worker(handle, DeviceTwins::twin_bytes(host));
  twins.copy_in({7});
  EXPECT_EQ(worker.data[0], 0x11);
  EXPECT_EQ(worker.data[kData - 1], 0x11);
  std::memset(worker.data, 0x22, kData);  // the worker's answer
  EXPECT_EQ(host.data()[0], 0x11);        // the harness's buffer is not the worker's
  twins.copy_out({7});
  EXPECT_EQ(host.data()[0], 0x22);
  EXPECT_EQ(host.data()[kData - 1], 0x22);
}

TEST(DeviceTwins, AChangedMarginByteIsAWriteNamedByTensorSideAndDistance) {
  DeviceTwins twins(make_stand_in_device_memory());
  SharedBuffer host(8, kData);
  const DeviceHandle handle = twins.add(host, "indices");
  WorkerView worker(handle, DeviceTwins::twin_bytes(host));
  twins.copy_in({8});
  // 1 MiB past the end of the data: beyond the 64 KiB guard band and the
  // page rounding, in the back margin.
  worker.data[kData + (1 << 20)] ^= 0xFF;
  const std::string past = margin_failure(twins, 8);
  EXPECT_NE(past.find("1 byte changed in the device memory the harness allocated around 'indices', the nearest "
                      "1.0 MiB past the end of its data (1048576 bytes)"),
            std::string::npos)
      << past;
  // The pattern put back, the twin passes again; then 100 KiB before the data.
  worker.data[kData + (1 << 20)] ^= 0xFF;
  twins.copy_out({8});
  (worker.data - 100 * 1024)[0] ^= 0x01;
  const std::string before = margin_failure(twins, 8);
  EXPECT_NE(before.find("the nearest 100.0 KiB before its data (102400 bytes)"), std::string::npos) << before;
  // Bytes are counted one by one, two within one word and one in the next.
  (worker.data - 100 * 1024)[0] ^= 0x01;
  twins.copy_out({8});
  unsigned char* after = worker.data + kData + (1 << 20);
  after[1] ^= 0x10;
  after[3] ^= 0x10;
  after[9] ^= 0x10;
  const std::string three = margin_failure(twins, 8);
  EXPECT_NE(three.find("3 bytes changed"), std::string::npos) << three;
  EXPECT_NE(three.find("(1048577 bytes)"), std::string::npos) << three;
}

}  // namespace
}  // namespace harness
