// The device twins of one worker's buffers, where the harness owns the
// device memory (harness/device_memory): each twin holds its whole buffer,
// guard bands included, between two margins of device memory the harness
// also allocated, filled with a pattern of this run's and checked at every
// reply. A stray write up to a margin's width from a buffer lands in memory
// the harness handed out, and is found and named; no byte of what it
// allocated goes unchecked.
//
// The harness keeps a mirror of what each twin held when it last wrote or
// read it. As a request goes out it first checks that the twin still holds
// that (a worker that wrote after its reply, to finish late or to keep
// something between requests, is caught), then writes only the words the
// round changed. Answers are read in an order drawn afresh at every reply,
// so that a worker racing the read cannot stay ahead of it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/challenge_api/executor.h"
#include "harness/device_memory/device_memory.h"
#include "harness/memory/shared_buffer.h"

namespace harness {

// The buffers the tensors of a call are in.
std::set<uint64_t> buffer_ids_of(const std::vector<Binding>& tensors);

class DeviceTwins {
 public:
  // Margins of this many bytes before and after each buffer.
  static constexpr size_t kMarginBytes = size_t{2} << 20;
  static constexpr size_t kMarginWords = kMarginBytes / sizeof(uint64_t);

  explicit DeviceTwins(std::shared_ptr<DeviceMemory> memory);

  // A twin for `buffer` (replacing any earlier one of its id), its margins
  // filled; returns how the worker opens it, the buffer's offset in it
  // ("offset") added to the handle. `access` says which verdict a change
  // after the reply is.
  DeviceHandle add(SharedBuffer& buffer, const std::string& name, protocol::Access access);
  // Size of the twin of `buffer`, margins included.
  static size_t twin_bytes(const SharedBuffer& buffer) { return buffer.total_bytes() + 2 * kMarginBytes; }
  uint64_t inode(uint64_t id) const;
  void remove(uint64_t id) { twins_.erase(id); }
  void clear() { twins_.clear(); }

  // The harness's buffers into their twins: whole the first time, then
  // only the words that differ from the mirror, once every twin is found to
  // hold what the harness last left in it; outputs first, inputs last. A twin changed since then throws
  // VerdictException: input_modified for an input, unwritten_output for an
  // output, out_of_bounds_write for a guard band or margin (unless
  // HARNESS_WITNESS_DISABLE names twin-late-writes).
  void copy_in(const std::set<uint64_t>& ids);
  // The twins back into the harness's buffers, whole, and their margins
  // checked: a changed byte there throws VerdictException
  // (out_of_bounds_write) naming the buffer and how far from its data the
  // nearest change lies.
  void copy_out(const std::set<uint64_t>& ids);

  // Bytes written into twins by copy_in since the twins were made.
  size_t bytes_written() const { return bytes_written_; }

  // Pieces a download of `bytes` is read in (in an order of their own).
  static size_t download_piece_bytes(size_t bytes);

 private:
  struct Twin {
    std::unique_ptr<DeviceTwin> memory;
    SharedBuffer* host = nullptr;
    std::string name;
    protocol::Access access = protocol::Access::in;
    // What the twin's buffer region held when the harness last wrote or
    // read it; valid once `synced`.
    std::unique_ptr<unsigned char[]> mirror;
    bool synced = false;
  };
  Twin& find(uint64_t id, const char* copy);
  void check_margins(const Twin& twin, bool since_reply);
  // Throws the verdict for a buffer region that no longer equals its mirror.
  [[noreturn]] void changed_since_reply(const Twin& twin);
  void download_shuffled(Twin& twin);
  // The word repeated through the margins of buffer `id`.
  uint64_t margin_word(uint64_t id) const;

  std::shared_ptr<DeviceMemory> memory_;
  uint64_t pattern_seed_;
  uint64_t downloads_ = 0;
  size_t bytes_written_ = 0;
  std::map<uint64_t, Twin> twins_;
  std::vector<uint64_t> margin_;  // one margin's words, reused by add() and check_margins()
};

}  // namespace harness
