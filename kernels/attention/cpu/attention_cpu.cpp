#include "attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "tile_plan.h"
// The persistent pool the CPU kernels share (one pool per shared library:
// each submission is its own .so).
#include "common/thread_pool.h"

namespace attention::cpu {
namespace detail {
namespace {

using kernels::common::hsum;

// Rows of rowsum(dout * o) per task of the backward's first pass.
constexpr int64_t kRowTermRows = 1024;

// The threads' tile scratch (and the backward's row terms), kept between
// calls: a fresh buffer per call would pay its page faults every time. One
// call at a time uses it.
std::mutex scratch_mutex;

// `floats` floats at a 64-byte boundary, so that every tile slot is aligned.
float* scratch(int64_t floats) {
  static std::vector<float> buffer;
  const size_t needed = static_cast<size_t>(floats + kLanes);
  if (buffer.size() < needed) {
    std::vector<float>().swap(buffer);  // never hold the old and the new buffer at once
    buffer.resize(needed);
  }
  const size_t misalignment = reinterpret_cast<uintptr_t>(buffer.data()) % 64 / sizeof(float);
  return buffer.data() + (misalignment == 0 ? 0 : kLanes - misalignment);
}

// Copies row tile `acc` [rows, ld] times `factor` into out [rows, dim].
void write_rows(const float* acc, int64_t ld, int64_t rows, int64_t dim, float factor, float* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t d = 0; d < dim; ++d) out[r * dim + d] = acc[r * ld + d] * factor;
}

struct Job {
  TilePlan plan;
  const float *q, *k, *v, *o, *lse, *dout;
  float *out_o, *out_lse, *dq, *dk, *dv;
  float* row_terms;  // backward: [batch * heads_q * n_q] rowsum(dout * o)
  float* scratch;    // [participants, plan.thread_floats()]

  float* thread_scratch(int participant) const { return scratch + participant * plan.thread_floats(); }
};

// A task over query tiles: which (batch * heads_q + head, tile). The last
// tiles see the most keys under the causal mask, so they are handed out first.
struct QueryTile {
  int64_t bh, kv_head, i0, rows, row0;
  QueryTile(const TilePlan& p, int64_t task) {
    const Shape& s = p.shape;
    const int64_t heads = s.batch * s.heads_q;
    bh = task % heads;
    kv_head = (bh / s.heads_q) * s.heads_kv + bh % s.heads_q / p.group;
    i0 = (p.q_tiles - 1 - task / heads) * kTile;
    rows = std::min(kTile, s.n_q - i0);
    row0 = bh * s.n_q + i0;
  }
};

// o and lse of one query tile, by key: q^T packed once, then each key tile
// the queries see, in order.
void forward_task(void* context, int64_t task, int participant) {
  const Job& job = *static_cast<const Job*>(context);
  const TilePlan& p = job.plan;
  const Shape& s = p.shape;
  const QueryTile t(p, task);
  const Slots slots(p, job.thread_scratch(participant));
  float *q_t = slots.tile(0), *ks = slots.tile(1), *vs = slots.tile(2), *st = slots.tile(3), *acc = slots.tile(4);
  float *m = slots.vector(0), *l = slots.vector(1), *alpha = slots.vector(2);
  pack_transposed(job.q + t.row0 * s.dim, s.dim, t.rows, q_t);
  std::fill(acc, acc + kTile * p.ld, 0.0f);
  std::fill(m, m + kTile, kMinusInf);
  std::fill(l, l + kTile, 0.0f);
  const float* k = job.k + t.kv_head * s.n_kv * s.dim;
  const float* v = job.v + t.kv_head * s.n_kv * s.dim;
  const int64_t end = p.keys_end(t.i0 + t.rows - 1);
  for (int64_t j0 = 0; j0 < end; j0 += kTile) {
    const int64_t n = std::min(kTile, s.n_kv - j0);
    const float* kr = row_operand(k + j0 * s.dim, s.dim, n, p.ld, ks);
    tile_scores(kr, p.ld, q_t, s.dim, s.scale, st);
    if (p.hides(t.i0, t.rows, j0)) mask_by_key(p.mask(t.i0, t.rows, j0), st);
    online_softmax_by_key(st, m, l, alpha, acc, p.ld);
    tile_accumulate(acc, st, row_operand(v + j0 * s.dim, s.dim, n, p.ld, vs), n, p.vectors);  // o += p v
  }
  for (int64_t r = 0; r < t.rows; ++r) {
    float* o = job.out_o + (t.row0 + r) * s.dim;
    if (l[r] > 0.0f) {  // >= 1: the row's largest score contributes exp(0)
      for (int64_t d = 0; d < s.dim; ++d) o[d] = acc[r * p.ld + d] / l[r];
      job.out_lse[t.row0 + r] = m[r] + std::log(l[r]);
    } else {
      std::fill(o, o + s.dim, 0.0f);
      job.out_lse[t.row0 + r] = kMinusInf;
    }
  }
}

// D[r] = rowsum(dout * o), float lanes of at most dim / kLanes terms each.
void row_terms_task(void* context, int64_t task, int /*participant*/) {
  const Job& job = *static_cast<const Job*>(context);
  const Shape& s = job.plan.shape;
  const int64_t end = std::min(s.batch * s.heads_q * s.n_q, (task + 1) * kRowTermRows);
  for (int64_t r = task * kRowTermRows; r < end; ++r) {
    const float *a = job.dout + r * s.dim, *b = job.o + r * s.dim;
    vfloat acc = {};
    int64_t d = 0;
    for (; d + kLanes <= s.dim; d += kLanes) acc += vload(a + d) * vload(b + d);
    float sum = hsum(acc);
    for (; d < s.dim; ++d) sum += a[d] * b[d];
    job.row_terms[r] = sum;
  }
}

// dk and dv of one key tile of one (batch, kv head), by query: k^T and v^T
// packed once, then every query head of the group and every query tile that
// sees the tile, in a fixed order.
void key_task(void* context, int64_t task, int participant) {
  const Job& job = *static_cast<const Job*>(context);
  const TilePlan& p = job.plan;
  const Shape& s = p.shape;
  const int64_t heads = s.batch * s.heads_kv;
  // The first key tiles are seen by the most queries under the causal mask: first out.
  const int64_t bg = task % heads, j0 = task / heads * kTile, n = std::min(kTile, s.n_kv - j0);
  const int64_t at = (bg * s.n_kv + j0) * s.dim;
  const Slots slots(p, job.thread_scratch(participant));
  float *kt = slots.tile(0), *vt = slots.tile(1), *qs = slots.tile(2), *dos = slots.tile(3);
  float *pt = slots.tile(4), *dpt = slots.tile(5), *dk = slots.tile(6), *dv = slots.tile(7);
  pack_transposed(job.k + at, s.dim, n, kt);
  pack_transposed(job.v + at, s.dim, n, vt);
  std::fill(dk, dk + kTile * p.ld, 0.0f);
  std::fill(dv, dv + kTile * p.ld, 0.0f);
  const int64_t first_head = (bg / s.heads_kv) * s.heads_q + bg % s.heads_kv * p.group;
  for (int64_t bh = first_head; bh < first_head + p.group; ++bh) {
    for (int64_t qt = p.first_q_tile(j0); qt < p.q_tiles; ++qt) {
      const int64_t i0 = qt * kTile, rows = std::min(kTile, s.n_q - i0), row0 = bh * s.n_q + i0;
      const float* qr = row_operand(job.q + row0 * s.dim, s.dim, rows, p.ld, qs);
      const float* dor = row_operand(job.dout + row0 * s.dim, s.dim, rows, p.ld, dos);
      tile_scores(qr, p.ld, kt, s.dim, s.scale, pt);
      if (p.hides(i0, rows, j0)) mask_by_query(p.mask(i0, rows, j0), pt);
      probabilities_by_query(pt, job.lse + row0, rows);
      tile_accumulate(dv, pt, dor, rows, p.vectors);  // dv_j += sum_i p_ij dout_i
      tile_scores(dor, p.ld, vt, s.dim, 1.0f, dpt);
      score_gradients_by_query(pt, dpt, job.row_terms + row0, rows);
      tile_accumulate(dk, pt, qr, rows, p.vectors);  // dk_j += sum_i ds_ij q_i
    }
  }
  write_rows(dk, p.ld, n, s.dim, s.scale, job.dk + at);
  write_rows(dv, p.ld, n, s.dim, 1.0f, job.dv + at);
}

// dq of one query tile, by key: q^T and dout^T packed once, then every key
// tile it sees, in order.
void query_task(void* context, int64_t task, int participant) {
  const Job& job = *static_cast<const Job*>(context);
  const TilePlan& p = job.plan;
  const Shape& s = p.shape;
  const QueryTile t(p, task);
  const Slots slots(p, job.thread_scratch(participant));
  float *q_t = slots.tile(0), *dout_t = slots.tile(1), *ks = slots.tile(2), *vs = slots.tile(3);
  float *pt = slots.tile(4), *dpt = slots.tile(5), *dq = slots.tile(6);
  float *bias = slots.vector(0), *row_terms = slots.vector(1);
  pack_transposed(job.q + t.row0 * s.dim, s.dim, t.rows, q_t);
  pack_transposed(job.dout + t.row0 * s.dim, s.dim, t.rows, dout_t);
  std::fill(dq, dq + kTile * p.ld, 0.0f);
  std::fill(std::copy(job.row_terms + t.row0, job.row_terms + t.row0 + t.rows, row_terms), row_terms + kTile, 0.0f);
  const float* k = job.k + t.kv_head * s.n_kv * s.dim;
  const float* v = job.v + t.kv_head * s.n_kv * s.dim;
  const int64_t end = p.keys_end(t.i0 + t.rows - 1);
  for (int64_t j0 = 0; j0 < end; j0 += kTile) {
    const int64_t n = std::min(kTile, s.n_kv - j0);
    const float* kr = row_operand(k + j0 * s.dim, s.dim, n, p.ld, ks);
    const float* vr = row_operand(v + j0 * s.dim, s.dim, n, p.ld, vs);
    tile_scores(kr, p.ld, q_t, s.dim, s.scale, pt);
    if (p.hides(t.i0, t.rows, j0)) mask_by_key(p.mask(t.i0, t.rows, j0), pt);
    probabilities_by_key(pt, job.lse + t.row0, t.rows, bias);
    tile_scores(vr, p.ld, dout_t, s.dim, 1.0f, dpt);
    score_gradients_by_key(pt, dpt, row_terms);
    tile_accumulate(dq, pt, kr, n, p.vectors);  // dq_i += sum_j ds_ij k_j
  }
  write_rows(dq, p.ld, t.rows, s.dim, s.scale, job.dq + t.row0 * s.dim);
}

}  // namespace
}  // namespace detail

using detail::Job;
using detail::TilePlan;
using kernels::common::ThreadPool;

void forward(const float* q, const float* k, const float* v, const Shape& shape, float* o, float* lse) {
  std::lock_guard<std::mutex> lock(detail::scratch_mutex);
  ThreadPool& pool = ThreadPool::instance();
  Job job{TilePlan(shape), q, k, v, nullptr, nullptr, nullptr, o, lse, nullptr, nullptr, nullptr, nullptr, nullptr};
  job.scratch = detail::scratch(pool.size() * job.plan.thread_floats());
  pool.run(shape.batch * shape.heads_q * job.plan.q_tiles, detail::forward_task, &job);
}

void backward(const float* q, const float* k, const float* v, const float* o, const float* lse, const float* dout,
              const Shape& shape, float* dq, float* dk, float* dv) {
  std::lock_guard<std::mutex> lock(detail::scratch_mutex);
  ThreadPool& pool = ThreadPool::instance();
  Job job{TilePlan(shape), q, k, v, o, lse, dout, nullptr, nullptr, dq, dk, dv, nullptr, nullptr};
  const int64_t tile_floats = pool.size() * job.plan.thread_floats();  // a multiple of kLanes
  const int64_t rows = shape.batch * shape.heads_q * shape.n_q;
  job.scratch = detail::scratch(tile_floats + rows);
  job.row_terms = job.scratch + tile_floats;
  pool.run((rows + detail::kRowTermRows - 1) / detail::kRowTermRows, detail::row_terms_task, &job);
  pool.run(shape.batch * shape.heads_kv * job.plan.kv_tiles, detail::key_task, &job);
  pool.run(shape.batch * shape.heads_q * job.plan.q_tiles, detail::query_task, &job);
}

}  // namespace attention::cpu
