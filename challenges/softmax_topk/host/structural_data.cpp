#include "structural_data.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace softmax_topk {

namespace {

constexpr int64_t kWarp = 32;

void fill_normal(harness::Rng& rng, float* row, int64_t n) {
  for (int64_t j = 0; j < n; ++j) row[j] = static_cast<float>(rng.normal(0.0, 2.0));
}

// Lifts columns [begin, begin + k) above every other logit of the row (by 4
// to 6, so they are the top k whatever the draw).
void lift_winners(const TopkCase& c, harness::Rng& rng, float* row, int64_t begin) {
  const float max = *std::max_element(row, row + c.vocab);
  for (int64_t j = begin; j < begin + c.k; ++j) row[j] = max + static_cast<float>(rng.uniform(4.0, 6.0));
}

}  // namespace

bool is_structural(Data data) {
  switch (data) {
    case Data::cluster_warp:
    case Data::cluster_tile:
    case Data::cluster_end:
    case Data::ascending:
    case Data::descending:
    case Data::tile_ties:
    case Data::masked_first_tile: return true;
    default: return false;
  }
}

void fill_structural_row(const TopkCase& c, harness::Rng& rng, float* row) {
  const int64_t vocab = c.vocab;
  switch (c.data) {
    case Data::cluster_warp: {
      // The winners share one warp's aligned slice of 32 columns, any but the first (k <= 32).
      fill_normal(rng, row, vocab);
      const int64_t slices = vocab / kWarp;
      const int64_t slice = slices > 1 ? 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(slices - 1))) : 0;
      const int64_t begin = slice * kWarp + static_cast<int64_t>(rng.below(static_cast<uint64_t>(kWarp - c.k + 1)));
      lift_winners(c, rng, row, begin);
      break;
    }
    case Data::cluster_tile: {
      // The winners are consecutive, inside one tile that is not the first.
      fill_normal(rng, row, vocab);
      const int64_t tiles = vocab / kTile;
      const int64_t tile = tiles > 1 ? 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(tiles - 1))) : 0;
      const int64_t begin = tile * kTile + static_cast<int64_t>(rng.below(static_cast<uint64_t>(kTile - c.k + 1)));
      lift_winners(c, rng, row, begin);
      break;
    }
    case Data::cluster_end:
      fill_normal(rng, row, vocab);
      lift_winners(c, rng, row, vocab - c.k);
      break;
    case Data::ascending:
      fill_normal(rng, row, vocab);
      std::sort(row, row + vocab);
      break;
    case Data::descending:
      fill_normal(rng, row, vocab);
      std::sort(row, row + vocab, std::greater<float>());
      break;
    case Data::tile_ties:
      // Integers 0..2, and 3 on both sides of every tile boundary: more
      // columns tie for the top than k, split between tiles.
      for (int64_t j = 0; j < vocab; ++j) row[j] = static_cast<float>(rng.below(3));
      for (int64_t edge = kTile; edge < vocab; edge += kTile) row[edge - 1] = row[edge] = 3.0f;
      break;
    case Data::masked_first_tile:
      // A running max started from the first tile starts at -inf.
      for (int64_t j = 0; j < std::min(vocab, kTile); ++j) row[j] = -std::numeric_limits<float>::infinity();
      fill_normal(rng, row + kTile, vocab - kTile);
      break;
    default: break;
  }
}

}  // namespace softmax_topk
