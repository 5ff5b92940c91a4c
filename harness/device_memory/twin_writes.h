// What a round changed in a buffer since the harness last synchronised its
// device twin, so that only those bytes are written into the twin as the
// request goes out: a kernel that polls its inputs sees the round's new
// values appear within the time those few writes take, not the time a
// whole buffer's copy takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace harness {

struct TwinWrites {
  // A run of changed bytes long enough to copy as it is; `from` is its
  // first byte on the host.
  struct Span {
    size_t offset = 0;
    size_t bytes = 0;
    const unsigned char* from = nullptr;
  };
  std::vector<Span> spans;
  // Changed words that lie apart: twin byte offsets (multiples of 8) and
  // their new values, written one by one.
  std::vector<uint64_t> word_offsets;
  std::vector<uint64_t> words;

  size_t bytes() const;
  bool empty() const { return spans.empty() && word_offsets.empty(); }
};

// Runs of at least this many changed bytes travel as spans.
inline constexpr size_t kTwinSpanBytes = 4096;

// The words of `now` that differ from `before` (both `bytes` long, a
// multiple of 8, and 8-byte aligned), as writes at twin offset
// `twin_offset` onwards.
TwinWrites changed_words(const unsigned char* now, const unsigned char* before, size_t bytes, size_t twin_offset);

}  // namespace harness
