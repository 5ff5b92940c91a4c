#include "harness/device_memory/twin_writes.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "harness/core/bulk_bytes.h"
#include "harness/core/error.h"

namespace harness {

size_t TwinWrites::bytes() const {
  size_t total = 8 * word_offsets.size();
  for (const Span& s : spans) total += s.bytes;
  return total;
}

namespace {

constexpr size_t kBlockBytes = 4096;

void add_run(TwinWrites& writes, const unsigned char* now, size_t begin, size_t end, size_t twin_offset) {
  if (end - begin >= kTwinSpanBytes) {
    writes.spans.push_back({twin_offset + begin, end - begin, now + begin});
    return;
  }
  for (size_t at = begin; at < end; at += 8) {
    uint64_t word = 0;
    std::memcpy(&word, now + at, 8);
    writes.word_offsets.push_back(twin_offset + at);
    writes.words.push_back(word);
  }
}

// The changed runs of [begin, end), whole blocks compared first and words
// only within a block that differs. A run that reaches `end` is cut there;
// the caller joins runs across chunks.
TwinWrites changed_in(const unsigned char* now, const unsigned char* before, size_t begin, size_t end,
                      size_t twin_offset) {
  TwinWrites writes;
  size_t run_begin = 0;
  bool in_run = false;
  for (size_t block = begin; block < end; block += kBlockBytes) {
    const size_t block_end = std::min(end, block + kBlockBytes);
    if (std::memcmp(now + block, before + block, block_end - block) == 0) {
      if (in_run) add_run(writes, now, run_begin, block, twin_offset);
      in_run = false;
      continue;
    }
    for (size_t at = block; at < block_end; at += 8) {
      const bool changed = std::memcmp(now + at, before + at, 8) != 0;
      if (changed && !in_run) run_begin = at;
      if (!changed && in_run) add_run(writes, now, run_begin, at, twin_offset);
      in_run = changed;
    }
  }
  if (in_run) add_run(writes, now, run_begin, end, twin_offset);
  return writes;
}

}  // namespace

TwinWrites changed_words(const unsigned char* now, const unsigned char* before, size_t bytes, size_t twin_offset) {
  HARNESS_CHECK(bytes % 8 == 0 && reinterpret_cast<uintptr_t>(now) % 8 == 0 &&
                    reinterpret_cast<uintptr_t>(before) % 8 == 0 && twin_offset % 8 == 0,
                "changed words of {} bytes at twin offset {}: not whole aligned words", bytes, twin_offset);
  std::mutex mutex;
  std::vector<std::pair<size_t, TwinWrites>> chunks;
  for_byte_chunks(bytes, kBlockBytes, [&](size_t begin, size_t end) {
    TwinWrites found = changed_in(now, before, begin, end, twin_offset);
    const std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(begin, std::move(found));
  });
  std::sort(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // A run cut at a chunk's end goes on in the next one: spans that touch are
  // joined (words that touch stay words: written apart, they are the same
  // bytes).
  TwinWrites all;
  for (auto& [begin, found] : chunks) {
    for (const TwinWrites::Span& s : found.spans) {
      if (!all.spans.empty() && all.spans.back().offset + all.spans.back().bytes == s.offset) {
        all.spans.back().bytes += s.bytes;
      } else {
        all.spans.push_back(s);
      }
    }
    all.word_offsets.insert(all.word_offsets.end(), found.word_offsets.begin(), found.word_offsets.end());
    all.words.insert(all.words.end(), found.words.begin(), found.words.end());
  }
  return all;
}

}  // namespace harness
