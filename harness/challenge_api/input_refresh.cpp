#include "harness/challenge_api/input_refresh.h"

#include <utility>

#include "harness/core/parallel.h"
#include "harness/core/rng.h"

namespace harness {

void swap_two_in_each_row(float* rows, int64_t count, int64_t width, uint64_t seed) {
  if (width < 2) return;
  const auto w = static_cast<size_t>(width);
  parallel_for(static_cast<size_t>(count), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      Rng rng(derive_seed(seed, r));
      const size_t a = rng.below(w);
      size_t b = rng.below(w - 1);
      if (b >= a) ++b;
      std::swap(rows[r * w + a], rows[r * w + b]);
    }
  });
}

}  // namespace harness
