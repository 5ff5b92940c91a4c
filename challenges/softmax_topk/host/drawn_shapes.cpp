#include "drawn_shapes.h"

#include <algorithm>

#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace softmax_topk {

namespace {

constexpr int64_t kTails[] = {1, 3, 7, 9, 31, 33, 63, 65, 95, 127};
constexpr int64_t kNearPowersOfTwo[] = {1, 2, 3, 5, 7, 9, 15, 17, 31, 33, 63, 65, 127, 129, 255, 256};

}  // namespace

std::string drawn_name(Drawn kind) {
  switch (kind) {
    case Drawn::vocab_edges: return "vocab_edges";
    case Drawn::many_rows: return "many_rows";
    case Drawn::k_edges: return "k_edges";
  }
  return "?";
}

Drawn drawn_from_name(const std::string& name) {
  for (Drawn kind : kDrawnKinds) {
    if (drawn_name(kind) == name) return kind;
  }
  HARNESS_FAIL("unknown drawn softmax_topk shape '{}'", name);
}

TopkCase draw_shape(Drawn kind, uint64_t seed) {
  harness::Rng rng(seed);
  TopkCase c;
  c.data = Data::normal;
  switch (kind) {
    case Drawn::vocab_edges: {
      const int64_t blocks[] = {32, 128, 256, 1024, 4096};
      c.vocab = rng.pick(blocks) * (1 + static_cast<int64_t>(rng.below(8))) + (rng.below(2) ? 1 : -1);
      c.k = std::min(rng.pick(kNearPowersOfTwo), c.vocab);
      c.rows = 1 + static_cast<int64_t>(rng.below(64));
      break;
    }
    case Drawn::many_rows: {
      const int64_t base = rng.below(2) ? 4096 : 65536;
      c.rows = base + 128 * static_cast<int64_t>(rng.below(base == 4096 ? 31 : 7)) + rng.pick(kTails);
      c.vocab = 1 + static_cast<int64_t>(rng.below(65));
      c.k = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(std::min<int64_t>(c.vocab, 16))));
      break;
    }
    case Drawn::k_edges: {
      c.k = rng.pick(kNearPowersOfTwo);
      const int64_t vocabs[] = {c.k, c.k + 1, c.k + 31, 2 * c.k + 1};
      c.vocab = rng.pick(vocabs);
      c.rows = 1 + static_cast<int64_t>(rng.below(64));
      break;
    }
  }
  return c;
}

}  // namespace softmax_topk
