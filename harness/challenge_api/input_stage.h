// New inputs for the next round of timed calls, kept out of the submission's
// sight until everything else between rounds is done, then written in one
// short burst (only the bytes that differ) right before the round's request:
// a worker watching its mapped inputs gets no head start the timing witness
// cannot see. See docs/ARCHITECTURE.md, Timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "harness/memory/shared_tensor.h"

namespace harness {

class InputStage {
 public:
  // `bytes` (tensor.bytes() of them) are the tensor's contents for the next
  // round. Staging a tensor again replaces what was staged for it.
  void stage(SharedTensor& tensor, const void* bytes);
  // As stage(), where the caller knows which elements may have changed: the
  // elements at flat indices `elements` (ascending) are staged from `bytes`,
  // and nothing else of either is read.
  void stage_elements(SharedTensor& tensor, const void* bytes, const std::vector<int64_t>& elements);

  // Applies the staged changes of `tensor` to `base` (a copy of its bytes as
  // they are now, e.g. the harness's snapshot); false when none are staged.
  bool apply(const SharedTensor& tensor, unsigned char* base) const;

  // Whether changes of `tensor` are staged.
  bool stages(const SharedTensor& tensor) const { return find(tensor) != nullptr; }

  // Writes every staged change into its tensor.
  void publish();

  // How many bytes publish() writes.
  size_t changed_bytes() const;
  size_t staged_tensors() const { return changes_.size(); }

 private:
  // Consecutive changed bytes of a tensor (whole 8-byte words, and the tail
  // of a tensor whose size is no multiple of 8): `length` bytes at
  // `offset`, their new values at `value_at` in TensorChanges::values.
  struct Run {
    size_t offset;
    size_t length;
    size_t value_at;
  };
  struct TensorChanges {
    SharedTensor* tensor;
    std::vector<Run> runs;
    std::vector<unsigned char> values;
  };
  const TensorChanges* find(const SharedTensor& tensor) const;
  // The changes of `tensor`, emptied for staging it again.
  TensorChanges& restage(SharedTensor& tensor, const void* bytes);
  static void add_run(TensorChanges& changes, size_t offset, const unsigned char* values, size_t length);
  std::vector<TensorChanges> changes_;
};

// Checks the round just timed and stages every set's new inputs (a cache's
// fresh queries, a stateless case's refresh). It must not write the sets'
// tensors itself: what it writes there the worker sees at once, and the
// harness's snapshot of the inputs would no longer match them.
using StageInputs = std::function<void(InputStage&)>;

}  // namespace harness
