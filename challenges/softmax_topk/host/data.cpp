#include "data.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/challenge_api/input_refresh.h"
#include "harness/core/parallel.h"
#include "harness/core/rng.h"
#include "structural_data.h"

namespace softmax_topk {

namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

void fill_row(const TopkCase& c, harness::Rng& rng, float* row) {
  const auto vocab = static_cast<size_t>(c.vocab);
  if (is_structural(c.data)) return fill_structural_row(c, rng, row);
  switch (c.data) {
    case Data::normal:
      for (size_t j = 0; j < vocab; ++j) row[j] = static_cast<float>(rng.normal(0.0, 2.0));
      break;
    case Data::ties:
      for (size_t j = 0; j < vocab; ++j) row[j] = static_cast<float>(rng.below(4));
      break;
    case Data::equal: {
      const auto value = static_cast<float>(rng.normal(0.0, 2.0));
      for (size_t j = 0; j < vocab; ++j) row[j] = value;
      break;
    }
    case Data::masked: {
      bool any_finite = false;
      for (size_t j = 0; j < vocab; ++j) {
        const bool masked = rng.uniform() < c.amount;
        row[j] = masked ? kMinusInfinity : static_cast<float>(rng.normal(0.0, 2.0));
        any_finite = any_finite || !masked;
      }
      if (!any_finite) row[rng.below(vocab)] = static_cast<float>(rng.normal(0.0, 2.0));
      break;
    }
    case Data::offset:
      for (size_t j = 0; j < vocab; ++j) row[j] = static_cast<float>(rng.normal(c.amount, 2.0));
      break;
    case Data::uniform:
      for (size_t j = 0; j < vocab; ++j) row[j] = static_cast<float>(rng.uniform(-c.amount, c.amount));
      break;
    case Data::dominant: {
      float max = kMinusInfinity;
      for (size_t j = 0; j < vocab; ++j) {
        row[j] = static_cast<float>(rng.normal(0.0, 2.0));
        max = std::max(max, row[j]);
      }
      row[rng.below(vocab)] = max + static_cast<float>(c.amount);
      break;
    }
    case Data::dominant_late: {
      // Past the first tile at every seed: a max taken over that tile alone
      // is `amount` (> 88) short, and exp overflows.
      float max = kMinusInfinity;
      for (size_t j = 0; j < vocab; ++j) {
        row[j] = static_cast<float>(rng.normal(0.0, 2.0));
        max = std::max(max, row[j]);
      }
      const auto first_tile = static_cast<size_t>(std::min<int64_t>(kTile, c.vocab - 1));
      row[first_tile + rng.below(vocab - first_tile)] = max + static_cast<float>(c.amount);
      break;
    }
    case Data::small_terms: {
      // Fixed magnitudes: every term but one is exp(-amount) of the largest,
      // and the largest sits in the first tile, so the error of a sum that
      // loses small terms (skips them, or adds them one by one to a float
      // already holding the largest) is the same at every seed.
      const auto top = static_cast<float>(rng.normal(0.0, 2.0));
      const float rest = top - static_cast<float>(c.amount);
      for (size_t j = 0; j < vocab; ++j) row[j] = rest;
      row[rng.below(static_cast<size_t>(std::min<int64_t>(kTile, c.vocab)))] = top;
      break;
    }
    case Data::one_finite:
      for (size_t j = 0; j < vocab; ++j) row[j] = kMinusInfinity;
      row[rng.below(vocab)] = static_cast<float>(rng.normal(0.0, 2.0));
      break;
    default: break;  // the structural kinds, filled above
  }
}

}  // namespace

void generate_logits(const TopkCase& c, uint64_t seed, float* logits) {
  harness::parallel_for(static_cast<size_t>(c.rows), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      harness::Rng rng(harness::derive_seed(seed, r));
      fill_row(c, rng, logits + r * static_cast<size_t>(c.vocab));
    }
  });
}

namespace {

// Where std::max_element finds a row's maximum, found faster by loops the
// compiler vectorises: the largest value by independent lanes, then the
// first block holding it. std::max_element never moves off a NaN in the
// first place and skips NaNs elsewhere; so does this.
size_t first_maximum(const float* row, size_t n) {
  if (row[0] != row[0]) return 0;
  constexpr size_t kLanes = 16;
  float lane[kLanes];
  for (size_t l = 0; l < kLanes; ++l) lane[l] = row[0];
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) lane[l] = row[j + l] > lane[l] ? row[j + l] : lane[l];
  }
  float best = row[0];
  for (size_t l = 0; l < kLanes; ++l) best = lane[l] > best ? lane[l] : best;
  for (; j < n; ++j) best = row[j] > best ? row[j] : best;
  constexpr size_t kBlock = 64;
  size_t block = 0;
  for (; block + kBlock <= n; block += kBlock) {
    int hit = 0;
    for (size_t l = 0; l < kBlock; ++l) hit |= row[block + l] == best;
    if (hit) break;
  }
  return static_cast<size_t>(std::find(row + block, row + n, best) - row);
}

}  // namespace

void move_each_row_maximum(const TopkCase& c, uint64_t seed, float* logits, std::vector<int64_t>* changed) {
  const harness::SwapRecord record(changed, c.rows, c.vocab);
  if (c.vocab < 2) return;
  const auto vocab = static_cast<size_t>(c.vocab);
  harness::parallel_for(static_cast<size_t>(c.rows), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      float* row = logits + r * vocab;
      const size_t top = first_maximum(row, vocab);
      harness::Rng rng(harness::derive_seed(seed, r));
      size_t other = rng.below(vocab - 1);
      if (other >= top) ++other;
      std::swap(row[top], row[other]);
      record.row(static_cast<int64_t>(r), static_cast<int64_t>(top), static_cast<int64_t>(other));
    }
  });
}

}  // namespace softmax_topk
