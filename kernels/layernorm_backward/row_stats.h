// The saved state of the project's fast layernorm kernels (CPU and CUDA share
// it): 2 floats per row, the minimum the challenge measures against.
//
// Why not (mean, rstd): on rows with a large offset (mean 1e6, std 1) a float
// mean is off by up to ulp(1e6)/2 = 0.03, and x - mean recomputed from it in
// the backward carries that error into every xhat. Instead each row is
// shifted by a value of its own, its first element K = x[r, 0]: x - K is
// exact for such rows (Sterbenz: x and K within a factor 2), and the mean of
// the shifted row is of the order of the row's spread, so a float keeps it to
// ~1e-7 of a standard deviation. The backward re-reads K from x, so nothing
// but these two floats has to be kept:
//   xhat[r, j] = ((x[r, j] - x[r, 0]) - shifted_mean) * rstd
#ifndef LAYERNORM_BACKWARD_ROW_STATS_H
#define LAYERNORM_BACKWARD_ROW_STATS_H

#include <cstdint>

namespace layernorm {

struct RowStats {
  float shifted_mean;  // mean_r - x[r, 0]
  float rstd;          // 1 / sqrt(var_r + eps)
};
static_assert(sizeof(RowStats) == 8, "the saved state is 2 floats per row");

// Bytes of saved state for `rows` rows: rows x RowStats, 4-byte aligned.
inline int64_t saved_state_bytes(int64_t rows) { return rows * static_cast<int64_t>(sizeof(RowStats)); }

}  // namespace layernorm

#endif  // LAYERNORM_BACKWARD_ROW_STATS_H
