#include "data.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attention/sdpa_reference.h"
#include "harness/core/parallel.h"
#include "harness/core/rng.h"
#include "row_pieces.h"

namespace attention {

namespace {

// max_jumps: the score offset of key block b (16 keys): -2000, 1000, -1000,
// 2000, 0, -2000, ... so that a row's maximum rises and falls by 1000 or more
// from one block to the next, for any tile of 16 keys or more.
constexpr int64_t kJumpBlock = 16;
double jump_offset(int64_t key) { return 1000.0 * static_cast<double>((key / kJumpBlock * 3) % 5 - 2); }

// one_hot: q and k scaled by this, so scores spread by ~36: each row's
// largest leads the next by ~20 on average.
constexpr double kOneHotGain = 6.0;

void fill_rows(int64_t count, int64_t dim, uint64_t seed, double gain, float* rows) {
  harness::parallel_for(static_cast<size_t>(count), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      harness::Rng rng(harness::derive_seed(seed, r));
      float* row = rows + r * static_cast<size_t>(dim);
      for (int64_t d = 0; d < dim; ++d) row[d] = static_cast<float>(rng.normal() * gain);
    }
  });
}

}  // namespace

void generate_inputs(const AttnCase& c, uint64_t seed, float* q, float* k, float* v, float* dout) {
  double q_gain = 1, k_gain = 1, v_gain = 1, dout_gain = 1;
  switch (c.data) {
    case Data::normal: break;
    case Data::huge: v_gain = 1e30, dout_gain = 1e-30; break;
    case Data::tiny: v_gain = 1e-30, dout_gain = 1e30; break;
    case Data::flat: q_gain = 1e-20; break;
    case Data::max_jumps: break;
    case Data::one_hot: q_gain = k_gain = kOneHotGain; break;
  }
  fill_rows(c.q_rows(), c.dim, harness::derive_seed(seed, "q"), q_gain, q);
  fill_rows(c.kv_rows(), c.dim, harness::derive_seed(seed, "k"), k_gain, k);
  fill_rows(c.kv_rows(), c.dim, harness::derive_seed(seed, "v"), v_gain, v);
  if (dout != nullptr) fill_rows(c.q_rows(), c.dim, harness::derive_seed(seed, "dout"), dout_gain, dout);
  if (c.data != Data::max_jumps) return;
  // Component 0 carries the jumps: q's is 1, k's the block's offset over
  // the scale, so the offset adds to every score exactly as chosen.
  for (int64_t r = 0; r < c.q_rows(); ++r) q[r * c.dim] = 1.0f;
  for (int64_t r = 0; r < c.kv_rows(); ++r) {
    k[r * c.dim] = static_cast<float>(jump_offset(r % c.n_kv) / static_cast<double>(c.scale()));
  }
}

void forward_of(const AttnCase& c, const float* q, const float* k, const float* v, float* o, float* lse) {
  const int64_t kv_size = c.n_kv * c.dim;
  for (int64_t kv = 0; kv < c.batch * c.heads_kv; ++kv) {
    const std::vector<double> k64(k + kv * kv_size, k + (kv + 1) * kv_size),
        v64(v + kv * kv_size, v + (kv + 1) * kv_size);
    const std::vector<RowPiece> pieces = pieces_of(c, kv);
    harness::parallel_for(pieces.size(), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t row = pieces[p].head * c.n_q + pieces[p].first, elements = pieces[p].count * c.dim;
        const std::vector<double> q64(q + row * c.dim, q + row * c.dim + elements);
        std::vector<double> o64(static_cast<size_t>(elements)), lse64(static_cast<size_t>(pieces[p].count));
        reference::sdpa_forward_head(piece_shape(c, pieces[p]), q64.data(), k64.data(), v64.data(), o64.data(),
                                     lse64.data());
        std::transform(o64.begin(), o64.end(), o + row * c.dim, [](double x) { return static_cast<float>(x); });
        std::transform(lse64.begin(), lse64.end(), lse + row, [](double x) { return static_cast<float>(x); });
      }
    });
  }
}

void backward_of(const AttnCase& c, const float* q, const float* k, const float* v, const float* dout, float* dq,
                 float* dk, float* dv) {
  const reference::SdpaShape s{c.n_q, c.n_kv, c.dim, c.scale(), c.causal};
  const auto q_head = static_cast<size_t>(c.n_q * c.dim), kv_head = static_cast<size_t>(c.n_kv * c.dim);
  const auto group = static_cast<size_t>(c.group());
  harness::parallel_for(static_cast<size_t>(c.batch * c.heads_kv), [&](size_t begin, size_t end) {
    for (size_t kv = begin; kv < end; ++kv) {
      const std::vector<double> k64(k + kv * kv_head, k + (kv + 1) * kv_head),
          v64(v + kv * kv_head, v + (kv + 1) * kv_head);
      std::vector<double> dk64(kv_head, 0.0), dv64(kv_head, 0.0), dq64(q_head);
      const auto first = static_cast<size_t>(c.first_q_head(static_cast<int64_t>(kv)));
      for (size_t head = first; head < first + group; ++head) {
        const std::vector<double> q64(q + head * q_head, q + (head + 1) * q_head),
            dout64(dout + head * q_head, dout + (head + 1) * q_head);
        reference::sdpa_backward_head(s, q64.data(), k64.data(), v64.data(), dout64.data(), dq64.data(), dk64.data(),
                                      dv64.data());
        for (size_t i = 0; i < q_head; ++i) dq[head * q_head + i] = static_cast<float>(dq64[i]);
      }
      for (size_t i = 0; i < kv_head; ++i) {
        dk[kv * kv_head + i] = static_cast<float>(dk64[i]);
        dv[kv * kv_head + i] = static_cast<float>(dv64[i]);
      }
    }
  });
}

}  // namespace attention
