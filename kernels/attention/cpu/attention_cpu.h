// Fast CPU attention, forward and backward: FlashAttention-style tiles with
// an online softmax, over the persistent thread pool. Plain functions on raw
// host pointers, not tied to the harness ABI (submissions/attention/cpu-fast
// wraps them). Layouts and semantics are those of challenges/attention/attention.h.
#ifndef ATTENTION_CPU_H
#define ATTENTION_CPU_H

#include <cstdint>

namespace kernels::common {
class ThreadPool;
}

namespace attention::cpu {

struct Shape {
  int64_t batch = 1;
  int64_t heads_q = 1;
  int64_t heads_kv = 1;  // divides heads_q
  int64_t n_q = 1;
  int64_t n_kv = 1;
  int64_t dim = 1;
  float scale = 1.0f;
  bool causal = false;  // key j seen by query i when j <= i + n_kv - n_q
};

// o [batch, heads_q, n_q, dim] and lse [batch, heads_q, n_q], every element
// written; a query that sees no key gets o = 0 and lse = -inf. Parallel over
// (batch, query head, tile of 64 queries); where those are fewer than twice
// the threads (few queries, many keys), over shares of each tile's keys too,
// merged by their max and sum. Key tiles the causal mask hides entirely are
// skipped. Needs every size >= 1.
// May throw std::bad_alloc (per-thread tile scratch, and a tile's o, max and
// sum per share where keys are shared, kept between calls).
void forward(const float* q, const float* k, const float* v, const Shape& shape, float* o, float* lse);

// The same on `pool` rather than the process's own (as backward below).
void forward(kernels::common::ThreadPool& pool, const float* q, const float* k, const float* v, const Shape& shape,
             float* o, float* lse);

// dq, dk, dv for dL/do = dout, given the forward's o and lse (lse used as
// given: p = exp(s - lse)). One pass over the visible tile pairs (the scores
// and dp computed once): each task owns key tiles of one (batch, kv head),
// sums their dk and dv itself and its dq terms in a partial dq of its own,
// added in a fixed order afterwards (backward_schedule.h). Deterministic for
// a given thread count: which thread runs a task changes no sum. Scratch
// besides the per-thread tiles: batch * heads_q * n_q floats of
// rowsum(dout * o), and the partial dqs, at most 128 floats per key (or
// query) and thread.
// May throw std::bad_alloc.
void backward(const float* q, const float* k, const float* v, const float* o, const float* lse, const float* dout,
              const Shape& shape, float* dq, float* dk, float* dv);

// The same on `pool` rather than the process's own: how its split by thread
// count is tested on pools this machine's CPUs would not give.
void backward(kernels::common::ThreadPool& pool, const float* q, const float* k, const float* v, const float* o,
              const float* lse, const float* dout, const Shape& shape, float* dq, float* dk, float* dv);

}  // namespace attention::cpu

#endif  // ATTENTION_CPU_H
