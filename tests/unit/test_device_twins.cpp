// DeviceTwins (harness/executors/device_twins.h) on the stand-in device: a
// buffer's twin between two margins of this run's pattern; copies in and
// out; a changed margin byte is out_of_bounds_write naming the tensor, the
// side and the distance from its data; only what a round changed is
// written; a twin written after the reply is caught before the next
// request; answers are read in an order drawn at each reply.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "harness/definitions/verdict.h"
#include "harness/executors/device_twins.h"
#include "support/test_support.h"

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
  const DeviceHandle handle = twins.add(host, "probs", protocol::Access::out);
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
  const DeviceHandle handle = twins.add(host, "indices", protocol::Access::out);
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

// After the first copy only what the harness changed goes into the twin:
// the worker's answers read at the reply are not written back, and of a
// round's new inputs only the words that differ are.
TEST(DeviceTwins, AfterTheFirstCopyOnlyTheWordsARoundChangedAreWritten) {
  DeviceTwins twins(make_stand_in_device_memory());
  constexpr size_t kRows = 64;
  constexpr size_t kRowBytes = 4096;
  SharedBuffer logits(9, kRows * kRowBytes);
  SharedBuffer probs(10, kRows * 64);
  std::memset(logits.data(), 0x3C, kRows * kRowBytes);
  WorkerView in(twins.add(logits, "logits", protocol::Access::in), DeviceTwins::twin_bytes(logits));
  WorkerView out(twins.add(probs, "probs", protocol::Access::out), DeviceTwins::twin_bytes(probs));
  twins.copy_in({9, 10});
  EXPECT_EQ(twins.bytes_written(), logits.total_bytes() + probs.total_bytes());
  std::memset(out.data, 0x22, kRows * 64);  // the worker's answer
  twins.copy_out({9, 10});

  // A refresh swaps two elements of every row (one word each) and the
  // outputs are poisoned whole.
  for (size_t row = 0; row < kRows; ++row) {
    logits.data()[row * kRowBytes + 8] = 0x01;
    logits.data()[row * kRowBytes + 2048] = 0x02;
  }
  std::memset(probs.data(), 0xFF, kRows * 64);
  const size_t before = twins.bytes_written();
  twins.copy_in({9, 10});
  EXPECT_EQ(twins.bytes_written() - before, 2 * kRows * 8 + kRows * 64);
  EXPECT_EQ(std::memcmp(in.base + DeviceTwins::kMarginBytes, logits.base(), logits.total_bytes()), 0);
  EXPECT_EQ(std::memcmp(out.base + DeviceTwins::kMarginBytes, probs.base(), probs.total_bytes()), 0);

  // Nothing changed: nothing written.
  twins.copy_out({9, 10});
  const size_t still = twins.bytes_written();
  twins.copy_in({9, 10});
  EXPECT_EQ(twins.bytes_written(), still);
}

std::pair<Verdict, std::string> copy_in_failure(DeviceTwins& twins, uint64_t id) {
  try {
    twins.copy_in({id});
  } catch (const VerdictException& e) {
    return {e.verdict(), e.message()};
  }
  return {Verdict::pass, ""};
}

// The exploit: a worker's thread writes into its twins after the reply, to
// keep something between requests (where the harness's memory witness does
// not look) or to finish its answers late, and takes it back in the next
// request. Before it writes the next round, the harness finds each twin as
// it left it or names the change. Without that check (twin-late-writes
// switched off) the stash outlives the copy in, which writes only what the
// round changed.
TEST(DeviceTwins, AStashLeftInATwinBetweenRequestsIsCaughtBeforeTheNextRequest) {
  DeviceTwins twins(make_stand_in_device_memory());
  SharedBuffer logits(11, kData);
  SharedBuffer probs(12, kData);
  WorkerView in(twins.add(logits, "logits", protocol::Access::in), DeviceTwins::twin_bytes(logits));
  WorkerView out(twins.add(probs, "probs", protocol::Access::out), DeviceTwins::twin_bytes(probs));
  twins.copy_in({11, 12});
  twins.copy_out({11, 12});

  in.data[100] ^= 0x5A;
  const auto [input_verdict, input_message] = copy_in_failure(twins, 11);
  EXPECT_EQ(input_verdict, Verdict::input_modified);
  EXPECT_NE(input_message.find("input 'logits' changed in its device twin after the harness read it at the reply: 1 "
                               "byte, the first at byte 100 of its data"),
            std::string::npos)
      << input_message;
  in.data[100] ^= 0x5A;
  twins.copy_in({11});

  out.data[kData - 1] ^= 0x01;
  const auto [output_verdict, output_message] = copy_in_failure(twins, 12);
  EXPECT_EQ(output_verdict, Verdict::unwritten_output);
  EXPECT_NE(output_message.find("output 'probs' changed in its device twin after the harness read it"),
            std::string::npos)
      << output_message;
  out.data[kData - 1] ^= 0x01;

  (out.data - 16)[0] ^= 0x01;  // the guard band before the data
  const auto [guard_verdict, guard_message] = copy_in_failure(twins, 12);
  EXPECT_EQ(guard_verdict, Verdict::out_of_bounds_write);
  EXPECT_NE(guard_message.find("1 byte of the guard bands around 'probs' changed"), std::string::npos) << guard_message;
  (out.data - 16)[0] ^= 0x01;

  (out.data + kData + (1 << 20))[0] ^= 0x01;  // a margin
  const auto [margin_verdict, margin_message] = copy_in_failure(twins, 12);
  EXPECT_EQ(margin_verdict, Verdict::out_of_bounds_write);
  EXPECT_NE(margin_message.find("around 'probs' after the reply, the nearest 1.0 MiB past the end"), std::string::npos)
      << margin_message;
  (out.data + kData + (1 << 20))[0] ^= 0x01;
  twins.copy_in({12});

  testing::ScopedEnv off("HARNESS_WITNESS_DISABLE", "twin-late-writes");
  twins.copy_out({11});
  std::memcpy(in.data + 64, "kept between requests", 21);
  twins.copy_in({11});
  EXPECT_EQ(std::memcmp(in.data + 64, "kept between requests", 21), 0);
}

// Records every download of the twins it makes (where it began, how long)
// and which twin each upload went to, in order.
class RecordingDeviceMemory : public DeviceMemory {
 public:
  struct Log {
    std::vector<std::pair<size_t, size_t>> downloads;
    std::vector<std::string> uploads;
  };
  explicit RecordingDeviceMemory(std::shared_ptr<Log> log) : inner_(make_stand_in_device_memory()), log_(log) {}
  std::string describe() const override { return inner_->describe(); }
  std::unique_ptr<DeviceTwin> allocate(size_t bytes, const std::string& what) override {
    return std::make_unique<Recording>(inner_->allocate(bytes, what), what, log_);
  }

 private:
  class Recording : public DeviceTwin {
   public:
    Recording(std::unique_ptr<DeviceTwin> inner, std::string what, std::shared_ptr<Log> log)
        : inner_(std::move(inner)), what_(std::move(what)), log_(log) {}
    size_t bytes() const override { return inner_->bytes(); }
    DeviceHandle handle() const override { return inner_->handle(); }
    uint64_t inode() const override { return inner_->inode(); }
    void upload(const void* host, size_t offset, size_t bytes) override {
      log_->uploads.push_back(what_);
      inner_->upload(host, offset, bytes);
    }
    void download(void* host, size_t offset, size_t bytes) override {
      log_->downloads.emplace_back(offset, bytes);
      inner_->download(host, offset, bytes);
    }

   private:
    std::unique_ptr<DeviceTwin> inner_;
    std::string what_;
    std::shared_ptr<Log> log_;
  };
  std::unique_ptr<DeviceMemory> inner_;
  std::shared_ptr<Log> log_;
};

// A worker that writes its answers after the reply, ahead of a read from
// the first byte to the last, would have them all read. The read goes by
// pieces in an order drawn at every reply, each byte exactly once.
TEST(DeviceTwins, AnswersAreReadInPiecesInAnOrderDrawnAtEachReply) {
  auto log = std::make_shared<RecordingDeviceMemory::Log>();
  DeviceTwins twins(std::make_shared<RecordingDeviceMemory>(log));
  SharedBuffer probs(13, size_t{8} << 20);
  twins.add(probs, "probs", protocol::Access::out);
  const size_t piece = DeviceTwins::download_piece_bytes(probs.total_bytes());
  EXPECT_EQ(piece, size_t{1} << 20);
  std::vector<std::vector<size_t>> orders;
  for (int reply = 0; reply < 3; ++reply) {
    log->downloads.clear();
    twins.copy_out({13});
    std::vector<size_t> order;
    size_t covered = 0;
    for (const auto& [offset, bytes] : log->downloads) {
      if (offset < DeviceTwins::kMarginBytes || offset >= DeviceTwins::kMarginBytes + probs.total_bytes()) continue;
      order.push_back((offset - DeviceTwins::kMarginBytes) / piece);
      covered += bytes;
    }
    EXPECT_EQ(covered, probs.total_bytes());
    std::vector<size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted.size(), (probs.total_bytes() + piece - 1) / piece);
    for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
    orders.push_back(order);
  }
  // Nine pieces: three equal draws in a row come once in 10^11.
  EXPECT_FALSE(orders[0] == orders[1] && orders[1] == orders[2]);
  EXPECT_EQ(DeviceTwins::download_piece_bytes(size_t{640} << 20), size_t{10} << 20);
}

// A round's writes go out outputs first and inputs last (whatever the
// buffers' ids), so that a kernel polling its inputs sees their new values
// only once nothing but the request is left: not while an output's poison,
// megabytes perhaps, is still being written.
TEST(DeviceTwins, TheInputsNewValuesAreWrittenLastAfterEveryOutputsPoison) {
  auto log = std::make_shared<RecordingDeviceMemory::Log>();
  DeviceTwins twins(std::make_shared<RecordingDeviceMemory>(log));
  SharedBuffer logits(14, kData);  // the lower id: by ids alone it would go first
  SharedBuffer probs(15, kData);
  WorkerView in(twins.add(logits, "logits", protocol::Access::in), DeviceTwins::twin_bytes(logits));
  twins.add(probs, "probs", protocol::Access::out);
  const auto order_of_copy_in = [&] {
    log->uploads.clear();
    twins.copy_in({14, 15});
    return log->uploads;
  };
  const std::vector<std::string> first = order_of_copy_in();
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front(), "probs");
  EXPECT_EQ(first.back(), "logits");
  twins.copy_out({14, 15});

  logits.data()[8] ^= 0x01;
  logits.data()[kData - 8] ^= 0x01;
  std::memset(probs.data(), 0xFF, kData);
  const std::vector<std::string> round = order_of_copy_in();
  ASSERT_EQ(round.size(), 3u) << "one span of poison, two words of new logits";
  EXPECT_EQ(round, (std::vector<std::string>{"probs", "logits", "logits"}));
  EXPECT_EQ(in.data[8], logits.data()[8]);
}

}  // namespace
}  // namespace harness
