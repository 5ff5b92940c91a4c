#include "harness/challenge_api/input_refresh.h"

#include <algorithm>
#include <utility>

#include "harness/core/parallel.h"
#include "harness/core/rng.h"

namespace harness {

SwapRecord::SwapRecord(std::vector<int64_t>* changed, int64_t count, int64_t width) : changed_(changed), width_(width) {
  if (changed_ != nullptr) changed_->assign(width < 2 ? 0 : static_cast<size_t>(2 * count), 0);
}

void SwapRecord::row(int64_t r, int64_t a, int64_t b) const {
  if (changed_ == nullptr) return;
  const auto at = static_cast<size_t>(2 * r);
  (*changed_)[at] = r * width_ + std::min(a, b);
  (*changed_)[at + 1] = r * width_ + std::max(a, b);
}

void swap_two_in_each_row(float* rows, int64_t count, int64_t width, uint64_t seed, std::vector<int64_t>* changed) {
  const SwapRecord record(changed, count, width);
  if (width < 2) return;
  const auto w = static_cast<size_t>(width);
  parallel_for(static_cast<size_t>(count), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      Rng rng(derive_seed(seed, r));
      const size_t a = rng.below(w);
      size_t b = rng.below(w - 1);
      if (b >= a) ++b;
      std::swap(rows[r * w + a], rows[r * w + b]);
      record.row(static_cast<int64_t>(r), static_cast<int64_t>(a), static_cast<int64_t>(b));
    }
  });
}

}  // namespace harness
