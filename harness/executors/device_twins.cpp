#include "harness/executors/device_twins.h"

#include <algorithm>
#include <random>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/format.h"
#include "harness/core/rng.h"
#include "harness/definitions/verdict.h"

namespace harness {

std::set<uint64_t> buffer_ids_of(const std::vector<Binding>& tensors) {
  std::set<uint64_t> ids;
  for (const Binding& b : tensors) ids.insert(b.tensor->buffer().id());
  return ids;
}

DeviceTwins::DeviceTwins(std::shared_ptr<DeviceMemory> memory)
    : memory_(std::move(memory)), pattern_seed_((uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()) {}

// Both margins start at a multiple of 8 bytes (a buffer is whole pages):
// one word of this run's, repeated, fills them both.
uint64_t DeviceTwins::margin_word(uint64_t id) const { return splitmix64(pattern_seed_ ^ id); }

DeviceHandle DeviceTwins::add(SharedBuffer& buffer, const std::string& name) {
  HARNESS_CHECK(buffer.total_bytes() % 8 == 0, "buffer '{}' of {} bytes is not whole words", name,
                buffer.total_bytes());
  Twin twin{memory_->allocate(twin_bytes(buffer), name), &buffer, name};
  margin_.assign(kMarginWords, margin_word(buffer.id()));
  twin.memory->upload(margin_.data(), 0, kMarginBytes);
  twin.memory->upload(margin_.data(), kMarginBytes + buffer.total_bytes(), kMarginBytes);
  DeviceHandle handle = twin.memory->handle();
  handle.open["offset"] = kMarginBytes;
  twins_[buffer.id()] = std::move(twin);
  return handle;
}

uint64_t DeviceTwins::inode(uint64_t id) const {
  const auto it = twins_.find(id);
  return it == twins_.end() ? 0 : it->second.memory->inode();
}

DeviceTwins::Twin& DeviceTwins::find(uint64_t id, const char* copy) {
  const auto it = twins_.find(id);
  HARNESS_CHECK(it != twins_.end(), "buffer {} has no device twin to copy {}", id, copy);
  return it->second;
}

void DeviceTwins::copy_in(const std::set<uint64_t>& ids) {
  for (const uint64_t id : ids) {
    Twin& twin = find(id, "into");
    twin.memory->upload(twin.host->base(), kMarginBytes, twin.host->total_bytes());
  }
}

void DeviceTwins::copy_out(const std::set<uint64_t>& ids) {
  for (const uint64_t id : ids) {
    Twin& twin = find(id, "out of");
    twin.memory->download(twin.host->base(), kMarginBytes, twin.host->total_bytes());
    check_margins(twin);
  }
}

void DeviceTwins::check_margins(const Twin& twin) {
  const SharedBuffer& host = *twin.host;
  const size_t data_begin = kMarginBytes + SharedBuffer::data_offset();
  const size_t data_end = data_begin + host.data_bytes();
  const uint64_t word = margin_word(host.id());
  margin_.resize(kMarginWords);
  size_t changed = 0;
  size_t nearest = 0;
  bool before = false;
  for (const size_t start : {size_t{0}, kMarginBytes + host.total_bytes()}) {
    twin.memory->download(margin_.data(), start, kMarginBytes);
    // Whole words first (vectorised); bytes only where a word differs.
    if (std::all_of(margin_.begin(), margin_.end(), [word](uint64_t w) { return w == word; })) continue;
    for (size_t w = 0; w < kMarginWords; ++w) {
      if (margin_[w] == word) continue;
      for (size_t b = 0; b < 8; ++b) {
        if (((margin_[w] ^ word) >> (8 * b) & 0xFF) == 0) continue;
        const size_t at = start + 8 * w + b;
        const size_t distance = at < data_begin ? data_begin - at : at - data_end;
        if (changed == 0 || distance < nearest) {
          nearest = distance;
          before = at < data_begin;
        }
        ++changed;
      }
    }
  }
  if (changed == 0) return;
  throw VerdictException(
      Verdict::out_of_bounds_write,
      fmt::format("{} byte{} changed in the device memory the harness allocated around '{}', the nearest {} {} its "
                  "data ({} bytes): a write beyond the tensor's guard band",
                  changed, changed == 1 ? "" : "s", twin.name, format_bytes(static_cast<double>(nearest)),
                  before ? "before" : "past the end of", nearest));
}

}  // namespace harness
