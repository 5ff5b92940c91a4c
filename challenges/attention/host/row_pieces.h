// A kv head's query rows cut into pieces for the float64 work (the checks,
// a backward case's forward): pieces that depend on the shape alone, so the
// work runs in parallel even with one head and its sums come out the same
// on any machine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attention/sdpa_reference.h"
#include "attn_case.h"

namespace attention {

// Rows first .. first + count of query head `head` (head-major over the batch).
struct RowPiece {
  int64_t head = 0;
  int64_t first = 0;
  int64_t count = 0;
};

// About 16 pieces for kv head `kv` (over the batch), at least one per query
// head of its group.
inline std::vector<RowPiece> pieces_of(const AttnCase& c, int64_t kv) {
  constexpr int64_t kPieces = 16;
  const int64_t first_head = c.first_q_head(kv);
  const int64_t per_head = std::max<int64_t>(1, (kPieces + c.group() - 1) / c.group());
  const int64_t rows = (c.n_q + per_head - 1) / per_head;
  std::vector<RowPiece> pieces;
  for (int64_t h = first_head; h < first_head + c.group(); ++h) {
    for (int64_t first = 0; first < c.n_q; first += rows) pieces.push_back({h, first, std::min(rows, c.n_q - first)});
  }
  return pieces;
}

inline reference::SdpaShape piece_shape(const AttnCase& c, const RowPiece& piece) {
  return {c.n_q, c.n_kv, c.dim, c.scale(), c.causal, piece.first, piece.count};
}

}  // namespace attention
