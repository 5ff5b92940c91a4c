#include "drawn_shapes.h"

#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace layernorm {

namespace {

// Offsets past a multiple of 128 that are no multiple of 64 (or of 8 but
// for 8's own neighbours): a row block's tail of 1, a few, or most of it.
constexpr int64_t kTails[] = {1, 3, 7, 9, 31, 33, 63, 65, 95, 127};

}  // namespace

std::string drawn_name(Drawn kind) {
  switch (kind) {
    case Drawn::large_rows: return "large_rows";
    case Drawn::huge_rows: return "huge_rows";
    case Drawn::odd_width: return "odd_width";
  }
  return "?";
}

Drawn drawn_from_name(const std::string& name) {
  for (Drawn kind : kDrawnKinds) {
    if (drawn_name(kind) == name) return kind;
  }
  HARNESS_FAIL("unknown drawn layernorm shape '{}'", name);
}

LnCase draw_shape(Drawn kind, uint64_t seed) {
  harness::Rng rng(seed);
  LnCase c;
  switch (kind) {
    case Drawn::large_rows: {
      const int64_t widths[] = {1, 7, 16, 33, 64, 100, 128, 255};
      c.rows = 4096 + 128 * static_cast<int64_t>(rng.below(31)) + rng.pick(kTails);
      c.dim = rng.pick(widths);
      break;
    }
    case Drawn::huge_rows: {
      const int64_t widths[] = {1, 2, 3, 5, 8, 17};
      c.rows = 65536 + 128 * static_cast<int64_t>(rng.below(7)) + rng.pick(kTails);
      c.dim = rng.pick(widths);
      break;
    }
    case Drawn::odd_width: {
      const int64_t offsets[] = {-7, -5, -3, -1, 1, 3, 5, 7};
      c.dim = (int64_t{64} << rng.below(8)) + rng.pick(offsets);
      c.rows = 1 + static_cast<int64_t>(rng.below(200));
      break;
    }
  }
  return c;
}

}  // namespace layernorm
