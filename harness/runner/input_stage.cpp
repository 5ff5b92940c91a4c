#include "harness/runner/input_stage.h"

#include <algorithm>
#include <cstring>

#include "harness/core/error.h"

namespace harness {

void InputStage::stage(SharedTensor& tensor, const void* bytes) {
  HARNESS_CHECK(bytes != nullptr, "staging {} without contents", tensor.spec().name);
  auto it = std::find_if(changes_.begin(), changes_.end(), [&](const TensorChanges& t) { return t.tensor == &tensor; });
  if (it == changes_.end()) it = changes_.insert(changes_.end(), TensorChanges{&tensor, {}});
  it->changes.clear();
  const auto* next = static_cast<const unsigned char*>(bytes);
  const auto* now = static_cast<const unsigned char*>(tensor.raw());
  const size_t size = tensor.bytes();
  for (size_t offset = 0; offset < size; offset += 8) {
    const auto length = static_cast<uint8_t>(std::min<size_t>(8, size - offset));
    uint64_t wanted = 0;
    uint64_t held = 0;
    std::memcpy(&wanted, next + offset, length);
    std::memcpy(&held, now + offset, length);
    if (wanted != held) it->changes.push_back(Change{offset, wanted, length});
  }
}

bool InputStage::apply(const SharedTensor& tensor, unsigned char* base) const {
  const auto it = std::find_if(changes_.begin(), changes_.end(), [&](const TensorChanges& t) { return t.tensor == &tensor; });
  if (it == changes_.end()) return false;
  for (const Change& c : it->changes) std::memcpy(base + c.offset, &c.value, c.length);
  return true;
}

void InputStage::publish() {
  for (const TensorChanges& t : changes_) apply(*t.tensor, static_cast<unsigned char*>(t.tensor->raw()));
}

size_t InputStage::changed_bytes() const {
  size_t bytes = 0;
  for (const TensorChanges& t : changes_) {
    for (const Change& c : t.changes) bytes += c.length;
  }
  return bytes;
}

}  // namespace harness
