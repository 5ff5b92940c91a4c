#include "check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention/sdpa_reference.h"
#include "harness/core/parallel.h"
#include "harness/core/rng.h"
#include "row_pieces.h"

namespace attention {

namespace {

using Vec = std::vector<double>;

Vec widen(const float* values, int64_t n) { return Vec(values, values + n); }

double dot(const double* a, const double* b, int64_t n) { return reference::sdpa_dot(a, b, n); }

double max_abs(const double* values, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(values[i]));
  return m;
}

reference::SdpaShape shape_of(const AttnCase& c) { return {c.n_q, c.n_kv, c.dim, c.scale(), c.causal}; }

// The magnitude of query i's scores before they cancel, an upper bound of
// scale * sum_d |q_d k_d| over its keys: how far a float32 rounding of the
// dot products moves them, in units of eps32 (README.md, Tolerances).
double score_term(const AttnCase& c, const double* q_row, const Vec& k_column_max) {
  double sum = 0;
  for (int64_t d = 0; d < c.dim; ++d) sum += std::fabs(q_row[d]) * k_column_max[static_cast<size_t>(d)];
  return c.scale() * sum;
}

Vec column_max(const double* rows, int64_t count, int64_t dim) {
  Vec m(static_cast<size_t>(dim), 0.0);
  for (int64_t r = 0; r < count; ++r) {
    for (int64_t d = 0; d < dim; ++d)
      m[static_cast<size_t>(d)] = std::max(m[static_cast<size_t>(d)], std::fabs(rows[r * dim + d]));
  }
  return m;
}

// Compares one tensor and folds it into the report.
void compare(harness::CheckReport& report, const std::string& name, const float* got, const Vec& reference,
             const std::vector<int64_t>& shape, const Tolerances& tolerances, const harness::ErrorScale* scale,
             const harness::Conditioning* conditioning) {
  harness::compare_into(report, name, got, reference.data(), reference.size(), shape, tolerances.at(name), scale,
                        conditioning);
}

void fail(harness::CheckReport& report, const std::string& message) {
  report.ok = false;
  report.message += (report.message.empty() ? "" : "; ") + message;
}

// Rows that see no key must hold o = 0 and lse = -inf exactly (README.md,
// "Queries that see no key"); their reference lse is then set to 0, and the
// submission's copy too, so that the comparison sees only the other rows.
std::vector<float> masked_rows_checked(harness::CheckReport& report, const AttnCase& c, const float* o,
                                       const float* lse, int64_t first_row, int64_t rows, Vec& lse_reference) {
  std::vector<float> lse_copy(lse, lse + rows);
  const reference::SdpaShape s = shape_of(c);
  int64_t wrong = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = (first_row + r) % c.n_q;
    if (reference::sdpa_visible_keys(s, i) > 0) continue;
    const float* o_row = o + r * c.dim;
    const bool zero = std::all_of(o_row, o_row + c.dim, [](float x) { return x == 0.0f; });
    const bool minus_inf = std::isinf(lse[r]) && lse[r] < 0;
    if ((!zero || !minus_inf) && wrong++ == 0) {
      fail(report, fmt::format("query row {} sees no key: o must be 0 and lse -inf, got lse {} and o[0] {}",
                               first_row + r, lse[r], o_row[0]));
    }
    lse_copy[static_cast<size_t>(r)] = 0.0f;
    lse_reference[static_cast<size_t>(r)] = 0.0;
  }
  if (wrong > 1) report.message += fmt::format(" ({} such rows wrong)", wrong);
  return lse_copy;
}

}  // namespace

namespace {

// One kv head's k and v in float64, with what the bounds need of them.
struct KvHead {
  Vec k, v, k_column_max;
  double k_max = 0, v_max = 0;
  KvHead(const AttnCase& c, const float* k32, const float* v32, int64_t kv)
      : k(widen(k32 + kv * c.n_kv * c.dim, c.n_kv * c.dim)), v(widen(v32 + kv * c.n_kv * c.dim, c.n_kv * c.dim)) {
    k_column_max = column_max(k.data(), c.n_kv, c.dim);
    k_max = max_abs(k.data(), c.n_kv * c.dim);
    v_max = max_abs(v.data(), c.n_kv * c.dim);
  }
};

}  // namespace

namespace {

std::vector<int64_t> all_kv_heads(const AttnCase& c) {
  std::vector<int64_t> heads(static_cast<size_t>(c.batch * c.heads_kv));
  for (size_t kv = 0; kv < heads.size(); ++kv) heads[kv] = static_cast<int64_t>(kv);
  return heads;
}

// The rows of a kv head's group of query heads, in o, lse, dq and dout: one
// contiguous run.
int64_t group_first_row(const AttnCase& c, int64_t kv) { return c.first_q_head(kv) * c.n_q; }

// `values` [rows, width] of the groups of `kv_heads`, one after another.
std::vector<float> gathered(const AttnCase& c, const float* values, const std::vector<int64_t>& kv_heads, int64_t width,
                            bool kv_rows) {
  std::vector<float> out;
  for (int64_t kv : kv_heads) {
    const int64_t first = kv_rows ? kv * c.n_kv : group_first_row(c, kv);
    const int64_t rows = kv_rows ? c.n_kv : c.group() * c.n_q;
    out.insert(out.end(), values + first * width, values + (first + rows) * width);
  }
  return out;
}

std::string sampled(const AttnCase& c, const std::vector<int64_t>& kv_heads) {
  if (static_cast<int64_t>(kv_heads.size()) == c.batch * c.heads_kv) return "";
  return fmt::format(" (kv heads checked, over the batch: {}; indices within them)", fmt::join(kv_heads, ", "));
}

}  // namespace

std::vector<int64_t> checked_kv_heads(const AttnCase& c, uint64_t seed) {
  std::vector<int64_t> heads = all_kv_heads(c);
  const double per_head = c.flops() / static_cast<double>(heads.size());
  const auto wanted = static_cast<size_t>(std::max(2.0, kCheckedFlops / std::max(per_head, 1.0)));
  if (wanted >= heads.size()) return heads;
  harness::Rng rng(seed);
  for (size_t i = 0; i < wanted; ++i) std::swap(heads[i], heads[i + rng.below(heads.size() - i)]);
  heads.resize(wanted);
  std::sort(heads.begin(), heads.end());
  return heads;
}

harness::CheckReport check_forward(const AttnCase& c, const ForwardTensors& t, const Tolerances& tolerances) {
  return check_forward(c, t, tolerances, all_kv_heads(c));
}

harness::CheckReport check_forward(const AttnCase& c, const ForwardTensors& t, const Tolerances& tolerances,
                                   const std::vector<int64_t>& kv_heads) {
  const int64_t group_rows = c.group() * c.n_q, heads = static_cast<int64_t>(kv_heads.size());
  Vec o_ref(static_cast<size_t>(heads * group_rows * c.dim)), lse_ref(static_cast<size_t>(heads * group_rows));
  double term = 0, v_max = 0;
  for (int64_t at = 0; at < heads; ++at) {
    const int64_t kv = kv_heads[static_cast<size_t>(at)];
    const KvHead head(c, t.k, t.v, kv);
    const std::vector<RowPiece> pieces = pieces_of(c, kv);
    Vec piece_term(pieces.size(), 0.0);
    harness::parallel_for(pieces.size(), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t row = pieces[p].head * c.n_q + pieces[p].first;
        const int64_t out = at * group_rows + row - group_first_row(c, kv);
        const Vec q = widen(t.q + row * c.dim, pieces[p].count * c.dim);
        reference::sdpa_forward_head(piece_shape(c, pieces[p]), q.data(), head.k.data(), head.v.data(),
                                     o_ref.data() + out * c.dim, lse_ref.data() + out);
        for (int64_t i = 0; i < pieces[p].count; ++i) {
          piece_term[p] = std::max(piece_term[p], score_term(c, q.data() + i * c.dim, head.k_column_max));
        }
      }
    });
    term = std::max(term, *std::max_element(piece_term.begin(), piece_term.end()));
    v_max = std::max(v_max, head.v_max);
  }
  const std::vector<float> o = gathered(c, t.o, kv_heads, c.dim, false),
                           lse_got = gathered(c, t.lse, kv_heads, 1, false);
  harness::CheckReport report;
  const std::vector<float> lse =
      masked_rows_checked(report, c, o.data(), lse_got.data(), 0, heads * group_rows, lse_ref);
  // o is a mean of v's rows: its rounding is of max|v|'s size, and a score
  // rounded by eps32 * term moves it by up to that times max|v|.
  const harness::ErrorScale o_scale{v_max, "max|v|"};
  const harness::Conditioning o_conditioning{term * v_max, "max score term * max|v|"};
  const harness::Conditioning lse_conditioning{term, "max score term (scale * sum_d |q_d| max_j |k_jd|)"};
  compare(report, "o", o.data(), o_ref, {heads * c.group(), c.n_q, c.dim}, tolerances, &o_scale, &o_conditioning);
  compare(report, "lse", lse.data(), lse_ref, {heads * c.group(), c.n_q}, tolerances, nullptr, &lse_conditioning);
  if (!report.ok) report.message += sampled(c, kv_heads);
  return report;
}

namespace {

// The float64 backward of one piece of a kv head's query rows: its dq rows,
// its share of dk and dv, and the term scales of dq, dk and dv (what their
// sums add before they cancel).
struct PieceGradients {
  Vec dk, dv, dk_terms, dv_terms;
  double dq_term = 0, score = 0;
};

void piece_gradients(const AttnCase& c, const BackwardTensors& t, const KvHead& head, const RowPiece& piece, double* dq,
                     PieceGradients& g) {
  const reference::SdpaShape s = piece_shape(c, piece);
  const int64_t row = piece.head * c.n_q + piece.first, kv_size = c.n_kv * c.dim;
  const Vec q = widen(t.q + row * c.dim, piece.count * c.dim), dout = widen(t.dout + row * c.dim, piece.count * c.dim);
  g.dk.assign(static_cast<size_t>(kv_size), 0.0);
  g.dv.assign(static_cast<size_t>(kv_size), 0.0);
  g.dk_terms.assign(static_cast<size_t>(c.n_kv), 0.0);
  g.dv_terms.assign(static_cast<size_t>(c.n_kv), 0.0);
  reference::sdpa_backward_head(s, q.data(), head.k.data(), head.v.data(), dout.data(), dq, g.dk.data(), g.dv.data());
  Vec o(static_cast<size_t>(piece.count * c.dim)), lse(static_cast<size_t>(piece.count));
  reference::sdpa_forward_head(s, q.data(), head.k.data(), head.v.data(), o.data(), lse.data());
  for (int64_t i = 0; i < piece.count; ++i) {
    const int64_t visible = reference::sdpa_visible_keys(s, piece.first + i);
    const double* q_row = q.data() + i * c.dim;
    const double* dout_row = dout.data() + i * c.dim;
    g.score = std::max(g.score, score_term(c, q_row, head.k_column_max));
    const double row_term = std::fabs(dot(dout_row, o.data() + i * c.dim, c.dim));
    const double q_row_max = max_abs(q_row, c.dim), dout_row_max = max_abs(dout_row, c.dim);
    double dq_term = 0;
    for (int64_t j = 0; j < visible; ++j) {
      const double p = std::exp(s.scale * dot(q_row, head.k.data() + j * c.dim, c.dim) - lse[static_cast<size_t>(i)]);
      const double ds_term = p * (std::fabs(dot(dout_row, head.v.data() + j * c.dim, c.dim)) + row_term);
      dq_term += s.scale * ds_term * head.k_max;
      g.dk_terms[static_cast<size_t>(j)] += s.scale * ds_term * q_row_max;
      g.dv_terms[static_cast<size_t>(j)] += p * dout_row_max;
    }
    g.dq_term = std::max(g.dq_term, dq_term);
  }
}

}  // namespace

harness::CheckReport check_backward(const AttnCase& c, const BackwardTensors& t, const Tolerances& tolerances) {
  return check_backward(c, t, tolerances, all_kv_heads(c));
}

harness::CheckReport check_backward(const AttnCase& c, const BackwardTensors& t, const Tolerances& tolerances,
                                    const std::vector<int64_t>& kv_heads) {
  const int64_t kv_size = c.n_kv * c.dim, group_rows = c.group() * c.n_q, heads = static_cast<int64_t>(kv_heads.size());
  Vec dq_ref(static_cast<size_t>(heads * group_rows * c.dim)), dk_ref(static_cast<size_t>(heads * kv_size)),
      dv_ref(static_cast<size_t>(heads * kv_size));
  double dq_term = 0, dk_term = 0, dv_term = 0, score = 0;
  for (int64_t at = 0; at < heads; ++at) {
    const int64_t kv = kv_heads[static_cast<size_t>(at)];
    const KvHead head(c, t.k, t.v, kv);
    const std::vector<RowPiece> pieces = pieces_of(c, kv);
    std::vector<PieceGradients> parts(pieces.size());
    harness::parallel_for(pieces.size(), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t row = pieces[p].head * c.n_q + pieces[p].first;
        double* dq = dq_ref.data() + (at * group_rows + row - group_first_row(c, kv)) * c.dim;
        piece_gradients(c, t, head, pieces[p], dq, parts[p]);
      }
    });
    // The pieces' shares added in their order: the same sums on any machine.
    Vec dk_terms(static_cast<size_t>(c.n_kv), 0.0), dv_terms(static_cast<size_t>(c.n_kv), 0.0);
    for (const PieceGradients& g : parts) {
      for (int64_t e = 0; e < kv_size; ++e) {
        dk_ref[static_cast<size_t>(at * kv_size + e)] += g.dk[static_cast<size_t>(e)];
        dv_ref[static_cast<size_t>(at * kv_size + e)] += g.dv[static_cast<size_t>(e)];
      }
      for (size_t j = 0; j < dk_terms.size(); ++j) {
        dk_terms[j] += g.dk_terms[j];
        dv_terms[j] += g.dv_terms[j];
      }
      dq_term = std::max(dq_term, g.dq_term);
      score = std::max(score, g.score);
    }
    dk_term = std::max(dk_term, *std::max_element(dk_terms.begin(), dk_terms.end()));
    dv_term = std::max(dv_term, *std::max_element(dv_terms.begin(), dv_terms.end()));
  }
  // Each gradient is a sum whose terms can cancel (dS = p * (dp - rowsum(dout
  // * o)) does near one-hot rows): its float32 rounding is of the terms' size.
  const harness::ErrorScale dq_scale{dq_term, "max_i scale * sum_j p|dp - D| terms * max|k|"};
  const harness::ErrorScale dk_scale{dk_term, "max_j scale * sum_i p|dp - D| terms * max|q|"};
  const harness::ErrorScale dv_scale{dv_term, "max_j sum_i p * max|dout|"};
  const harness::Conditioning dq_conditioning{score * dq_term, "max score term * dq's term scale"};
  const harness::Conditioning dk_conditioning{score * dk_term, "max score term * dk's term scale"};
  const harness::Conditioning dv_conditioning{score * dv_term, "max score term * dv's term scale"};
  const std::vector<float> dq = gathered(c, t.dq, kv_heads, c.dim, false),
                           dk = gathered(c, t.dk, kv_heads, c.dim, true), dv = gathered(c, t.dv, kv_heads, c.dim, true);
  harness::CheckReport report;
  compare(report, "dq", dq.data(), dq_ref, {heads * c.group(), c.n_q, c.dim}, tolerances, &dq_scale, &dq_conditioning);
  compare(report, "dk", dk.data(), dk_ref, {heads, c.n_kv, c.dim}, tolerances, &dk_scale, &dk_conditioning);
  compare(report, "dv", dv.data(), dv_ref, {heads, c.n_kv, c.dim}, tolerances, &dv_scale, &dv_conditioning);
  if (!report.ok) report.message += sampled(c, kv_heads);
  return report;
}

harness::CheckReport check_forward_row(const AttnCase& c, const ForwardTensors& t, int64_t row,
                                       const Tolerances& tolerances) {
  const int64_t h = row / c.n_q, i = row % c.n_q, kv = c.kv_head(h);
  const reference::SdpaShape s = shape_of(c);
  const int64_t visible = reference::sdpa_visible_keys(s, i);
  harness::CheckReport report;
  const float* o = t.o + row * c.dim;
  Vec o_ref(static_cast<size_t>(c.dim), 0.0), lse_ref(1, 0.0);
  if (visible == 0) {
    masked_rows_checked(report, c, o, t.lse + row, row, 1, lse_ref);
    return report;
  }
  // The row alone: its visible keys, unmasked.
  const Vec q = widen(t.q + row * c.dim, c.dim), k = widen(t.k + kv * c.n_kv * c.dim, visible * c.dim),
            v = widen(t.v + kv * c.n_kv * c.dim, visible * c.dim);
  reference::sdpa_forward_head({1, visible, c.dim, s.scale, false}, q.data(), k.data(), v.data(), o_ref.data(),
                               lse_ref.data());
  const double v_max = max_abs(v.data(), visible * c.dim);
  const double term = score_term(c, q.data(), column_max(k.data(), visible, c.dim));
  const harness::ErrorScale o_scale{v_max, "max|v|"};
  const harness::Conditioning o_conditioning{term * v_max, "max score term * max|v|"};
  const harness::Conditioning lse_conditioning{term, "max score term (scale * sum_d |q_d| max_j |k_jd|)"};
  compare(report, "o", o, o_ref, {c.dim}, tolerances, &o_scale, &o_conditioning);
  compare(report, "lse", t.lse + row, lse_ref, {1}, tolerances, nullptr, &lse_conditioning);
  return report;
}

harness::CheckReport check_backward_row(const AttnCase& c, const BackwardTensors& t, int64_t row,
                                        const Tolerances& tolerances) {
  const reference::SdpaShape s = shape_of(c);
  harness::CheckReport report;
  {
    // dq of query row `row`: its own visible keys alone.
    const int64_t h = row / c.n_q, i = row % c.n_q, kv = c.kv_head(h);
    const int64_t visible = reference::sdpa_visible_keys(s, i);
    Vec dq_ref(static_cast<size_t>(c.dim), 0.0);
    double term = 0;
    if (visible > 0) {
      const Vec q = widen(t.q + row * c.dim, c.dim), dout = widen(t.dout + row * c.dim, c.dim),
                k = widen(t.k + kv * c.n_kv * c.dim, visible * c.dim),
                v = widen(t.v + kv * c.n_kv * c.dim, visible * c.dim);
      Vec dk(static_cast<size_t>(visible * c.dim)), dv(dk.size());
      reference::sdpa_backward_head({1, visible, c.dim, s.scale, false}, q.data(), k.data(), v.data(), dout.data(),
                                    dq_ref.data(), dk.data(), dv.data());
      // The same term scale as the full check, with the given o and lse.
      const double row_term = std::fabs(dot(dout.data(), widen(t.o + row * c.dim, c.dim).data(), c.dim));
      const double k_max = max_abs(k.data(), visible * c.dim);
      for (int64_t j = 0; j < visible; ++j) {
        const double p =
            std::exp(s.scale * dot(q.data(), k.data() + j * c.dim, c.dim) - static_cast<double>(t.lse[row]));
        term += s.scale * p * (std::fabs(dot(dout.data(), v.data() + j * c.dim, c.dim)) + row_term) * k_max;
      }
    }
    const harness::ErrorScale scale{term, "scale * sum_j p|dp - D| terms * max|k|"};
    compare(report, "dq", t.dq + row * c.dim, dq_ref, {c.dim}, tolerances, &scale, nullptr);
  }
  // dk and dv of kv row `row % kv_rows`, from every query of its group that
  // sees it, with the o and lse the submission was given.
  const int64_t kv_row = row % c.kv_rows(), kv = kv_row / c.n_kv, j = kv_row % c.n_kv;
  const Vec k = widen(t.k + kv_row * c.dim, c.dim), v = widen(t.v + kv_row * c.dim, c.dim);
  Vec dk_ref(static_cast<size_t>(c.dim), 0.0), dv_ref(dk_ref.size(), 0.0);
  double dk_term = 0, dv_term = 0;
  const int64_t first_q_head = c.first_q_head(kv);
  for (int64_t h = first_q_head; h < first_q_head + c.group(); ++h) {
    for (int64_t i = 0; i < c.n_q; ++i) {
      if (reference::sdpa_visible_keys(s, i) <= j) continue;
      const int64_t r = h * c.n_q + i;
      const Vec q = widen(t.q + r * c.dim, c.dim), dout = widen(t.dout + r * c.dim, c.dim),
                o = widen(t.o + r * c.dim, c.dim);
      const double p = std::exp(s.scale * dot(q.data(), k.data(), c.dim) - static_cast<double>(t.lse[r]));
      const double dp = dot(dout.data(), v.data(), c.dim), row_term = dot(dout.data(), o.data(), c.dim);
      const double ds = p * (dp - row_term);
      for (int64_t d = 0; d < c.dim; ++d) {
        dk_ref[static_cast<size_t>(d)] += s.scale * ds * q[static_cast<size_t>(d)];
        dv_ref[static_cast<size_t>(d)] += p * dout[static_cast<size_t>(d)];
      }
      dk_term += s.scale * p * (std::fabs(dp) + std::fabs(row_term)) * max_abs(q.data(), c.dim);
      dv_term += p * max_abs(dout.data(), c.dim);
    }
  }
  const harness::ErrorScale dk_scale{dk_term, "scale * sum_i p|dp - D| terms * max|q|"};
  const harness::ErrorScale dv_scale{dv_term, "sum_i p * max|dout|"};
  compare(report, "dk", t.dk + kv_row * c.dim, dk_ref, {c.dim}, tolerances, &dk_scale, nullptr);
  compare(report, "dv", t.dv + kv_row * c.dim, dv_ref, {c.dim}, tolerances, &dv_scale, nullptr);
  return report;
}

}  // namespace attention
