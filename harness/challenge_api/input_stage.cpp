#include "harness/challenge_api/input_stage.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "harness/core/bulk_bytes.h"
#include "harness/core/error.h"

namespace harness {

const InputStage::TensorChanges* InputStage::find(const SharedTensor& tensor) const {
  const auto it =
      std::find_if(changes_.begin(), changes_.end(), [&](const TensorChanges& t) { return t.tensor == &tensor; });
  return it == changes_.end() ? nullptr : &*it;
}

InputStage::TensorChanges& InputStage::restage(SharedTensor& tensor, const void* bytes) {
  HARNESS_CHECK(bytes != nullptr, "staging {} without contents", tensor.spec().name);
  auto it = std::find_if(changes_.begin(), changes_.end(), [&](const TensorChanges& t) { return t.tensor == &tensor; });
  if (it == changes_.end()) it = changes_.insert(changes_.end(), TensorChanges{&tensor, {}, {}});
  it->runs.clear();
  it->values.clear();
  return *it;
}

void InputStage::stage(SharedTensor& tensor, const void* bytes) {
  TensorChanges& staged = restage(tensor, bytes);
  const auto* next = static_cast<const unsigned char*>(bytes);
  const auto* now = static_cast<const unsigned char*>(tensor.raw());
  const size_t size = tensor.bytes();
  // A refresh changes a few elements of each row: blocks compared whole
  // (memcmp, vectorised) leave only the few that differ to look into word
  // by word. Chunks of whole blocks are diffed side by side, then joined in
  // order.
  constexpr size_t kBlock = 256;
  std::mutex mutex;
  std::map<size_t, TensorChanges> pieces;
  for_byte_chunks(size, kBlock, [&](size_t chunk_begin, size_t chunk_end) {
    TensorChanges piece{&tensor, {}, {}};
    for (size_t block = chunk_begin; block < chunk_end; block += kBlock) {
      const size_t end = std::min(chunk_end, block + kBlock);
      if (std::memcmp(next + block, now + block, end - block) == 0) continue;
      for (size_t offset = block; offset < end; offset += 8) {
        const size_t length = std::min<size_t>(8, size - offset);
        if (std::memcmp(next + offset, now + offset, length) == 0) continue;
        add_run(piece, offset, next + offset, length);
      }
    }
    const std::lock_guard<std::mutex> lock(mutex);
    pieces.emplace(chunk_begin, std::move(piece));
  });
  for (const auto& [begin, piece] : pieces) {
    for (const Run& run : piece.runs) add_run(staged, run.offset, piece.values.data() + run.value_at, run.length);
  }
}

void InputStage::stage_elements(SharedTensor& tensor, const void* bytes, const std::vector<int64_t>& elements) {
  TensorChanges& staged = restage(tensor, bytes);
  const size_t element = dtype_size(tensor.spec().dtype);
  const auto count = static_cast<int64_t>(tensor.elements());
  const auto* next = static_cast<const unsigned char*>(bytes);
  int64_t last = -1;
  for (const int64_t e : elements) {
    HARNESS_CHECK(e > last && e < count, "staging {}: element {} is not above {} and below {} (indices ascending)",
                  tensor.spec().name, e, last, count);
    last = e;
    const size_t offset = static_cast<size_t>(e) * element;
    add_run(staged, offset, next + offset, element);
  }
}

// Appends changed bytes, joined to the last run where they follow it.
void InputStage::add_run(TensorChanges& changes, size_t offset, const unsigned char* values, size_t length) {
  if (!changes.runs.empty() && changes.runs.back().offset + changes.runs.back().length == offset) {
    changes.runs.back().length += length;
  } else {
    changes.runs.push_back(Run{offset, length, changes.values.size()});
  }
  changes.values.insert(changes.values.end(), values, values + length);
}

bool InputStage::apply(const SharedTensor& tensor, unsigned char* base) const {
  const TensorChanges* t = find(tensor);
  if (t == nullptr) return false;
  for (const Run& run : t->runs) std::memcpy(base + run.offset, t->values.data() + run.value_at, run.length);
  return true;
}

void InputStage::publish() {
  for (const TensorChanges& t : changes_) apply(*t.tensor, static_cast<unsigned char*>(t.tensor->raw()));
}

size_t InputStage::changed_bytes() const {
  size_t bytes = 0;
  for (const TensorChanges& t : changes_) bytes += t.values.size();
  return bytes;
}

}  // namespace harness
