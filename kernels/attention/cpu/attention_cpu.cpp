#include "attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "backward_schedule.h"
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

// Adds row tile `acc` [rows, ld] times `factor` to out [rows, dim].
void add_rows(const float* acc, int64_t ld, int64_t rows, int64_t dim, float factor, float* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t d = 0; d < dim; ++d) out[r * dim + d] += acc[r * ld + d] * factor;
}

// Per-thread scratch of a task: tiles, then vectors of kTile.
constexpr int kForwardTiles = 5, kForwardVectors = 3;
constexpr int kBackwardTiles = 9;

struct Job {
  explicit Job(const Shape& shape) : plan(shape) {}

  TilePlan plan;
  const float *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr, *dout = nullptr;
  float *out_o = nullptr, *out_lse = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
  float* scratch = nullptr;   // [participants, thread_floats]
  int64_t thread_floats = 0;  // of one participant's scratch

  // The forward's: tasks per query tile (each a share of its keys) and,
  // where there are several, each task's unnormalised o, max and sum.
  int64_t key_splits = 1;
  float* partials = nullptr;  // [tasks, partial_floats()]
  int64_t partial_floats() const { return kTile * (plan.ld + 2); }

  // The backward's: rowsum(dout * o) of every query, the schedule, its dq
  // partials [schedule.slots(), slot_floats] and the round being run.
  float* row_terms = nullptr;
  BackwardSchedule schedule;
  float* dq_slots = nullptr;
  int64_t round_head = 0;   // which query head of each group
  int64_t round_first = 0;  // the round's first (batch * heads_kv + kv head)

  float* thread_scratch(int participant) const { return scratch + participant * thread_floats; }
  // The round's query head of the group of kv head bg (batch * heads_kv + kv head).
  int64_t round_query_head(int64_t bg) const {
    return (bg / plan.shape.heads_kv) * plan.shape.heads_q + bg % plan.shape.heads_kv * plan.group + round_head;
  }
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

// Key tiles that query tiles of the whole tile count shared out alone would
// leave threads idle (few queries, many keys: the long-context shape on a
// machine of many CPUs): each query tile's keys are then split among up to
// 4 tasks per thread, and their partial sums merged.
int64_t forward_key_splits(const TilePlan& p, int participants) {
  const int64_t tiles = p.shape.batch * p.shape.heads_q * p.q_tiles;
  if (participants <= 1 || tiles >= 2 * participants) return 1;
  return std::min(p.kv_tiles, (4 * participants + tiles - 1) / tiles);
}

// Writes o = acc / l and lse = m + log l of a query tile's rows; a row that
// saw no key gets o = 0 and lse = -inf.
void write_output(const Job& job, const QueryTile& t, const float* acc, const float* m, const float* l) {
  const Shape& s = job.plan.shape;
  for (int64_t r = 0; r < t.rows; ++r) {
    float* o = job.out_o + (t.row0 + r) * s.dim;
    if (l[r] > 0.0f) {  // >= 1: the row's largest score contributes exp(0)
      for (int64_t d = 0; d < s.dim; ++d) o[d] = acc[r * job.plan.ld + d] / l[r];
      job.out_lse[t.row0 + r] = m[r] + std::log(l[r]);
    } else {
      std::fill(o, o + s.dim, 0.0f);
      job.out_lse[t.row0 + r] = kMinusInf;
    }
  }
}

// A query tile against its share of the keys it sees, by key: q^T packed
// once, then each key tile in order, into the running max m, sum l and
// unnormalised o. With one share, o and lse are written; with several, the
// task's m, l and o are left in its partial for forward_merge_task.
void forward_task(void* context, int64_t task, int participant) {
  const Job& job = *static_cast<const Job*>(context);
  const TilePlan& p = job.plan;
  const Shape& s = p.shape;
  const QueryTile t(p, task / job.key_splits);
  const int64_t share = task % job.key_splits;
  const Slots slots(p, job.thread_scratch(participant), kForwardTiles);
  float *q_t = slots.tile(0), *ks = slots.tile(1), *vs = slots.tile(2), *st = slots.tile(3), *acc = slots.tile(4);
  float *m = slots.vector(0), *l = slots.vector(1), *alpha = slots.vector(2);
  if (job.key_splits > 1) {
    acc = job.partials + task * job.partial_floats();
    m = acc + kTile * p.ld;
    l = m + kTile;
  }
  pack_transposed(job.q + t.row0 * s.dim, s.dim, t.rows, q_t);
  std::fill(acc, acc + kTile * p.ld, 0.0f);
  std::fill(m, m + kTile, kMinusInf);
  std::fill(l, l + kTile, 0.0f);
  const float* k = job.k + t.kv_head * s.n_kv * s.dim;
  const float* v = job.v + t.kv_head * s.n_kv * s.dim;
  const int64_t seen = (p.keys_end(t.i0 + t.rows - 1) + kTile - 1) / kTile;  // key tiles the tile sees
  const int64_t end = std::min(s.n_kv, seen * (share + 1) / job.key_splits * kTile);
  for (int64_t j0 = seen * share / job.key_splits * kTile; j0 < end; j0 += kTile) {
    const int64_t n = std::min(kTile, s.n_kv - j0);
    const float* kr = row_operand(k + j0 * s.dim, s.dim, n, p.ld, ks);
    tile_scores(kr, p.ld, q_t, s.dim, s.scale, st);
    if (p.hides(t.i0, t.rows, j0)) mask_by_key(p.mask(t.i0, t.rows, j0), st);
    online_softmax_by_key(st, m, l, alpha, acc, p.ld);
    tile_accumulate(acc, st, row_operand(v + j0 * s.dim, s.dim, n, p.ld, vs), n, p.vectors);  // o += p v
  }
  if (job.key_splits == 1) write_output(job, t, acc, m, l);
}

// o and lse of one query tile from its tasks' partials, in share order:
// each rescaled from its own max to the largest.
void forward_merge_task(void* context, int64_t task, int participant) {
  const Job& job = *static_cast<const Job*>(context);
  const TilePlan& p = job.plan;
  const QueryTile t(p, task);
  const Slots slots(p, job.thread_scratch(participant), kForwardTiles);
  float *acc = slots.tile(4), *m = slots.vector(0), *l = slots.vector(1);
  const float* first = job.partials + task * job.key_splits * job.partial_floats();
  for (int64_t r = 0; r < t.rows; ++r) {
    m[r] = kMinusInf;
    for (int64_t share = 0; share < job.key_splits; ++share)
      m[r] = std::max(m[r], first[share * job.partial_floats() + kTile * p.ld + r]);
    l[r] = 0.0f;
    std::fill(acc + r * p.ld, acc + (r + 1) * p.ld, 0.0f);
    if (m[r] == kMinusInf) continue;  // no key seen: l stays 0
    for (int64_t share = 0; share < job.key_splits; ++share) {
      const float* part = first + share * job.partial_floats();
      const float share_m = part[kTile * p.ld + r];
      if (share_m == kMinusInf) continue;  // saw none of its keys
      const float factor = std::exp(share_m - m[r]);
      l[r] += part[kTile * p.ld + kTile + r] * factor;
      for (int64_t d = 0; d < p.ld; ++d) acc[r * p.ld + d] += part[r * p.ld + d] * factor;
    }
  }
  write_output(job, t, acc, m, l);
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

// One key tile j0 of kv head `bg` against query head `bh`, by query: dk and
// dv of the tile (written in the group's first round, added after), and the
// tile's terms of dq added to `dq_slot`.
void backward_key_tile(const Job& job, const Slots& slots, int64_t bg, int64_t bh, int64_t j0, float* dq_slot) {
  const TilePlan& p = job.plan;
  const Shape& s = p.shape;
  const int64_t n = std::min(kTile, s.n_kv - j0), at = (bg * s.n_kv + j0) * s.dim;
  float *kt = slots.tile(0), *vt = slots.tile(1), *qs = slots.tile(2), *dos = slots.tile(3), *pt = slots.tile(4);
  float *dpt = slots.tile(5), *dk = slots.tile(6), *dv = slots.tile(7), *ks = slots.tile(8);
  pack_transposed(job.k + at, s.dim, n, kt);
  pack_transposed(job.v + at, s.dim, n, vt);
  const float* kr = row_operand(job.k + at, s.dim, n, p.ld, ks);
  std::fill(dk, dk + kTile * p.ld, 0.0f);
  std::fill(dv, dv + kTile * p.ld, 0.0f);
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
    tile_accumulate(dk, pt, qr, rows, p.vectors);                     // dk_j += sum_i ds_ij q_i
    tile_accumulate_rows(dq_slot + i0 * p.ld, pt, kr, n, p.vectors);  // dq_i += sum_j ds_ij k_j
  }
  const auto out = job.round_head == 0 ? write_rows : add_rows;
  out(dk, p.ld, n, s.dim, s.scale, job.dk + at);
  out(dv, p.ld, n, s.dim, 1.0f, job.dv + at);
}

// A chunk of the key tiles of one (batch, kv head) of the round, against the
// round's query head of its group; its dq terms summed in its own slot.
void backward_task(void* context, int64_t task, int participant) {
  const Job& job = *static_cast<const Job*>(context);
  const TilePlan& p = job.plan;
  const BackwardSchedule& plan = job.schedule;
  const int64_t bg = job.round_first + task / plan.chunks, chunk = task % plan.chunks;
  float* dq_slot = job.dq_slots + task * plan.slot_floats;
  std::fill(dq_slot, dq_slot + plan.slot_floats, 0.0f);
  const Slots slots(p, job.thread_scratch(participant), kBackwardTiles);
  for (int64_t turn = 0; turn * plan.chunks < p.kv_tiles; ++turn) {
    const int64_t tile = plan.key_tile(p, chunk, turn);
    if (tile >= 0) backward_key_tile(job, slots, bg, job.round_query_head(bg), tile * kTile, dq_slot);
  }
}

// dq of one query tile of a head of the round: its chunks' slots, summed in
// chunk order.
void dq_sum_task(void* context, int64_t task, int /*participant*/) {
  const Job& job = *static_cast<const Job*>(context);
  const TilePlan& p = job.plan;
  const Shape& s = p.shape;
  const BackwardSchedule& plan = job.schedule;
  const int64_t w = task / p.q_tiles, i0 = task % p.q_tiles * kTile, rows = std::min(kTile, s.n_q - i0);
  float* dq = job.dq + (job.round_query_head(job.round_first + w) * s.n_q + i0) * s.dim;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t d = 0; d < s.dim; ++d) {
      const float* term = job.dq_slots + w * plan.chunks * plan.slot_floats + (i0 + r) * p.ld + d;
      float sum = 0.0f;
      for (int64_t c = 0; c < plan.chunks; ++c) sum += term[c * plan.slot_floats];
      dq[r * s.dim + d] = sum * s.scale;
    }
  }
}

}  // namespace
}  // namespace detail

using detail::Job;
using detail::TilePlan;
using kernels::common::ThreadPool;

void forward(const float* q, const float* k, const float* v, const Shape& shape, float* o, float* lse) {
  forward(ThreadPool::instance(), q, k, v, shape, o, lse);
}

void forward(ThreadPool& pool, const float* q, const float* k, const float* v, const Shape& shape, float* o,
             float* lse) {
  std::lock_guard<std::mutex> lock(detail::scratch_mutex);
  Job job(shape);
  job.q = q, job.k = k, job.v = v, job.out_o = o, job.out_lse = lse;
  job.thread_floats = job.plan.thread_floats(detail::kForwardTiles, detail::kForwardVectors);
  job.key_splits = detail::forward_key_splits(job.plan, pool.size());
  const int64_t query_tiles = shape.batch * shape.heads_q * job.plan.q_tiles;
  const int64_t tile_floats = pool.size() * job.thread_floats;  // a multiple of kLanes, as is a partial
  const int64_t partial_floats = job.key_splits > 1 ? query_tiles * job.key_splits * job.partial_floats() : 0;
  job.scratch = detail::scratch(tile_floats + partial_floats);
  job.partials = job.scratch + tile_floats;
  pool.run(query_tiles * job.key_splits, detail::forward_task, &job);
  if (job.key_splits > 1) pool.run(query_tiles, detail::forward_merge_task, &job);
}

void backward(const float* q, const float* k, const float* v, const float* o, const float* lse, const float* dout,
              const Shape& shape, float* dq, float* dk, float* dv) {
  backward(ThreadPool::instance(), q, k, v, o, lse, dout, shape, dq, dk, dv);
}

void backward(ThreadPool& pool, const float* q, const float* k, const float* v, const float* o, const float* lse,
              const float* dout, const Shape& shape, float* dq, float* dk, float* dv) {
  using detail::kLanes;
  std::lock_guard<std::mutex> lock(detail::scratch_mutex);
  Job job(shape);
  job.q = q, job.k = k, job.v = v, job.o = o, job.lse = lse, job.dout = dout, job.dq = dq, job.dk = dk, job.dv = dv;
  job.thread_floats = job.plan.thread_floats(detail::kBackwardTiles, 0);
  job.schedule = detail::BackwardSchedule(job.plan, pool.size());
  // Tiles, row terms, dq slots: each a multiple of kLanes floats, so that each stays aligned.
  const int64_t tile_floats = pool.size() * job.thread_floats;
  const int64_t rows = shape.batch * shape.heads_q * shape.n_q, row_floats = (rows + kLanes - 1) / kLanes * kLanes;
  job.scratch = detail::scratch(tile_floats + row_floats + job.schedule.slots() * job.schedule.slot_floats);
  job.row_terms = job.scratch + tile_floats;
  job.dq_slots = job.row_terms + row_floats;
  pool.run((rows + detail::kRowTermRows - 1) / detail::kRowTermRows, detail::row_terms_task, &job);
  const int64_t kv_heads = shape.batch * shape.heads_kv;
  for (job.round_head = 0; job.round_head < job.plan.group; ++job.round_head) {
    for (job.round_first = 0; job.round_first < kv_heads; job.round_first += job.schedule.wave) {
      const int64_t heads = std::min(job.schedule.wave, kv_heads - job.round_first);
      pool.run(heads * job.schedule.chunks, detail::backward_task, &job);
      pool.run(heads * job.plan.q_tiles, detail::dq_sum_task, &job);
    }
  }
}

}  // namespace attention::cpu
