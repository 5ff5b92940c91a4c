#include "harness/executors/device_twins.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "harness/core/bulk_bytes.h"
#include "harness/core/error.h"
#include "harness/core/format.h"
#include "harness/core/rng.h"
#include "harness/definitions/verdict.h"
#include "harness/witness/witness_parts.h"

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

DeviceHandle DeviceTwins::add(SharedBuffer& buffer, const std::string& name, protocol::Access access) {
  HARNESS_CHECK(buffer.total_bytes() % 8 == 0, "buffer '{}' of {} bytes is not whole words", name,
                buffer.total_bytes());
  Twin twin;
  twin.memory = memory_->allocate(twin_bytes(buffer), name);
  twin.host = &buffer;
  twin.name = name;
  twin.access = access;
  twin.mirror.reset(new unsigned char[buffer.total_bytes()]);
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
  const bool check_since_reply = !witness_part_disabled("twin-late-writes");
  // Every twin is found as the harness left it before any is written.
  std::vector<std::pair<Twin*, TwinWrites>> pending;
  for (const uint64_t id : ids) {
    Twin& twin = find(id, "into");
    const size_t bytes = twin.host->total_bytes();
    if (!twin.synced) {
      TwinWrites whole;
      whole.spans.push_back({kMarginBytes, bytes, twin.host->base()});
      pending.emplace_back(&twin, std::move(whole));
      continue;
    }
    if (check_since_reply) {
      check_margins(twin, true);
      if (!twin.memory->holds(twin.mirror.get(), kMarginBytes, bytes)) changed_since_reply(twin);
    }
    pending.emplace_back(&twin, changed_words(twin.host->base(), twin.mirror.get(), bytes, kMarginBytes));
  }
  // The outputs' poison first, the inputs' new values last: a kernel that
  // polls its inputs sees them only as the request goes out.
  for (const bool inputs : {false, true}) {
    for (auto& [twin, writes] : pending) {
      if (is_written(twin->access) == inputs) continue;
      twin->memory->write(writes);
      bytes_written_ += writes.bytes();
      unsigned char* mirror = twin->mirror.get();
      for (const TwinWrites::Span& s : writes.spans) copy_bytes(mirror + (s.offset - kMarginBytes), s.from, s.bytes);
      for (size_t w = 0; w < writes.word_offsets.size(); ++w) {
        std::memcpy(mirror + (writes.word_offsets[w] - kMarginBytes), &writes.words[w], 8);
      }
      twin->synced = true;
    }
  }
}

void DeviceTwins::copy_out(const std::set<uint64_t>& ids) {
  for (const uint64_t id : ids) {
    Twin& twin = find(id, "out of");
    download_shuffled(twin);
    copy_bytes(twin.mirror.get(), twin.host->base(), twin.host->total_bytes());
    twin.synced = true;
    check_margins(twin, false);
  }
}

size_t DeviceTwins::download_piece_bytes(size_t bytes) {
  constexpr size_t kLeast = size_t{1} << 20;
  constexpr size_t kPieces = 64;
  const size_t even = (bytes / kPieces + 4095) / 4096 * 4096;
  return std::max(kLeast, even);
}

// A worker that goes on writing answers after its reply, ahead of a read
// that went from the first byte to the last, would have them all read;
// read in an order drawn at this reply, the pieces it has not yet written
// are read as poison with the same chance wherever they lie.
void DeviceTwins::download_shuffled(Twin& twin) {
  const size_t bytes = twin.host->total_bytes();
  const size_t piece = download_piece_bytes(bytes);
  std::vector<size_t> order((bytes + piece - 1) / piece);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 draw(splitmix64(pattern_seed_ ^ ++downloads_));
  std::shuffle(order.begin(), order.end(), draw);
  for (const size_t i : order) {
    const size_t begin = i * piece;
    twin.memory->download(twin.host->base() + begin, kMarginBytes + begin, std::min(piece, bytes - begin));
  }
}

void DeviceTwins::changed_since_reply(const Twin& twin) {
  const SharedBuffer& host = *twin.host;
  const size_t bytes = host.total_bytes();
  std::vector<unsigned char> now(bytes);
  twin.memory->download(now.data(), kMarginBytes, bytes);
  const size_t data_begin = SharedBuffer::data_offset();
  const size_t data_end = data_begin + host.data_bytes();
  size_t in_guards = 0;
  size_t in_data = 0;
  size_t first = 0;
  for (size_t at = 0; at < bytes; ++at) {
    if (now[at] == twin.mirror[at]) continue;
    if (at < data_begin || at >= data_end) {
      ++in_guards;
    } else if (in_data++ == 0) {
      first = at - data_begin;
    }
  }
  const std::string when = "changed in its device twin after the harness read it at the reply";
  if (in_guards > 0) {
    throw VerdictException(Verdict::out_of_bounds_write,
                           fmt::format("{} byte{} of the guard bands around '{}' {}: a write beyond the tensor, "
                                       "after the reply",
                                       in_guards, in_guards == 1 ? "" : "s", twin.name, when));
  }
  HARNESS_CHECK(in_data > 0,
                "the device twin of '{}' compared unequal to what the harness left in it, yet no byte "
                "of it differs when read again",
                twin.name);
  const bool input = !is_written(twin.access);
  throw VerdictException(
      input ? Verdict::input_modified : Verdict::unwritten_output,
      fmt::format("{} '{}' {}: {} byte{}, the first at byte {} of its data ({}); the harness judges what it read at "
                  "the reply",
                  input ? "input" : "output", twin.name, when, in_data, in_data == 1 ? "" : "s", first,
                  input ? "memory kept between requests, or work left running after the reply"
                        : "answers still being written after the reply"));
}

void DeviceTwins::check_margins(const Twin& twin, bool since_reply) {
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
      fmt::format("{} byte{} changed in the device memory the harness allocated around '{}'{}, the nearest {} {} "
                  "its data ({} bytes): a write beyond the tensor's guard band",
                  changed, changed == 1 ? "" : "s", twin.name, since_reply ? " after the reply" : "",
                  format_bytes(static_cast<double>(nearest)), before ? "before" : "past the end of", nearest));
}

}  // namespace harness
