#include "harness/challenge_api/input_stage.h"

#include <algorithm>
#include <cstring>

#include "harness/core/error.h"

namespace harness {

const InputStage::TensorChanges* InputStage::find(const SharedTensor& tensor) const {
  const auto it =
      std::find_if(changes_.begin(), changes_.end(), [&](const TensorChanges& t) { return t.tensor == &tensor; });
  return it == changes_.end() ? nullptr : &*it;
}

void InputStage::stage(SharedTensor& tensor, const void* bytes) {
  HARNESS_CHECK(bytes != nullptr, "staging {} without contents", tensor.spec().name);
  auto it = std::find_if(changes_.begin(), changes_.end(), [&](const TensorChanges& t) { return t.tensor == &tensor; });
  if (it == changes_.end()) it = changes_.insert(changes_.end(), TensorChanges{&tensor, {}, {}});
  it->runs.clear();
  it->values.clear();
  const auto* next = static_cast<const unsigned char*>(bytes);
  const auto* now = static_cast<const unsigned char*>(tensor.raw());
  const size_t size = tensor.bytes();
  // A refresh changes a few elements of each row: blocks compared whole
  // (memcmp, vectorised) leave only the few that differ to look into word
  // by word.
  constexpr size_t kBlock = 256;
  for (size_t block = 0; block < size; block += kBlock) {
    const size_t end = std::min(size, block + kBlock);
    if (std::memcmp(next + block, now + block, end - block) == 0) continue;
    for (size_t offset = block; offset < end; offset += 8) {
      const size_t length = std::min<size_t>(8, size - offset);
      if (std::memcmp(next + offset, now + offset, length) == 0) continue;
      if (!it->runs.empty() && it->runs.back().offset + it->runs.back().length == offset) {
        it->runs.back().length += length;
      } else {
        it->runs.push_back(Run{offset, length, it->values.size()});
      }
      it->values.insert(it->values.end(), next + offset, next + offset + length);
    }
  }
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
