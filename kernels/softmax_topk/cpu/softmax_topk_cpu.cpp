// Fast CPU softmax + top-k: one pass over each row from memory.
//
// A row is walked in chunks of kChunk floats (4 KiB, resident in L1), and each
// chunk is swept three times from L1:
//   1. the chunk's max (4 independent vector accumulators);
//   2. if it raises the running max m, the running sum s is rescaled once by
//      exp(m_old - m_new); then s += sum exp(x - m) over the chunk, with a
//      vectorised exp and 4 x 16 float lanes, added to a double running sum;
//   3. selection, skipped outright when the chunk's max is <= the threshold
//      (the smallest value kept): otherwise one vector compare per 16
//      elements, and only elements above the threshold touch the heap.
// In a row's first chunk the filter is also raised to a cheap lower bound of
// the chunk's k-th largest value (from the sweep-1 accumulators), since that
// is where most heap insertions would otherwise happen.
// The top-k structure is a min-heap of k 64-bit keys (value, column) seeded
// with the row's first k columns, so that -inf entries fill the answer when a
// row has fewer than k finite ones. A lower column wins a tie, and columns
// arrive in increasing order, so an element enters only when strictly greater
// than the top: the result is exactly the first k in the order (value desc,
// column asc), the same answer as the CUDA kernel. The k winners are sorted at
// the end and get exp(x - m) / s in double.
#include "softmax_topk_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/thread_pool.h"
#include "common/vec_math.h"

namespace softmax_topk::cpu {
namespace {

using kernels::common::any_greater;
using kernels::common::hmax;
using kernels::common::hsum;
using kernels::common::kLanes;
using kernels::common::ThreadPool;
using kernels::common::vbroadcast;
using kernels::common::vexp;
using kernels::common::vfloat;
using kernels::common::vload;
using kernels::common::vload_partial;
using kernels::common::vmax;

constexpr int64_t kChunk = 1024;
static_assert(kChunk % (4 * kLanes) == 0, "sweeps 1 and 2 unroll by 4 vectors");
// Below this many elements in total a call stays on the calling thread: the
// pool's wake-up would cost more than the work.
constexpr int64_t kMinParallelElements = 1 << 16;

// A candidate is one integer, so that the heap compares with one instruction
// and no NaN-parity branches: the float's bits mapped to an unsigned order in
// the high half, the complement of the column in the low half. Larger key =
// larger value, or equal value and lower column.
using Key = uint64_t;

inline Key make_key(float value, int64_t column) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint32_t ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<Key>(ordered) << 32) | static_cast<uint32_t>(~static_cast<uint32_t>(column));
}

inline float key_value(Key key) {
  const uint32_t ordered = static_cast<uint32_t>(key >> 32);
  const uint32_t bits = (ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline int32_t key_column(Key key) { return static_cast<int32_t>(~static_cast<uint32_t>(key)); }

// Min-heap heap[0, k) (heap[0] = the worst kept candidate), followed by one
// sentinel heap[k] = max key, so that a node's second child needs no bounds
// check. Replaces the top by `key` (> top) and restores the heap; the choice
// of child is a conditional move, not a branch.
void sift_down(Key* heap, int64_t k, Key key) {
  int64_t hole = 0;
  for (;;) {
    int64_t child = 2 * hole + 1;
    if (child >= k) break;
    child += heap[child + 1] < heap[child];
    if (heap[child] >= key) break;
    heap[hole] = heap[child];
    hole = child;
  }
  heap[hole] = key;
}

constexpr int kLaneMaxima = 4 * kLanes;

// Max of each of the kLaneMaxima lanes of the 4 accumulators: lane l of
// accumulator a sees a disjoint subset of the chunk, so these are the maxima
// of kLaneMaxima disjoint subsets (-inf for an empty one).
void chunk_lane_maxima(const float* p, int64_t n, float* out) {
  const vfloat neg_inf = vbroadcast(-std::numeric_limits<float>::infinity());
  vfloat m[4] = {neg_inf, neg_inf, neg_inf, neg_inf};
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    m[0] = vmax(m[0], vload(p + i));
    m[1] = vmax(m[1], vload(p + i + kLanes));
    m[2] = vmax(m[2], vload(p + i + 2 * kLanes));
    m[3] = vmax(m[3], vload(p + i + 3 * kLanes));
  }
  for (; i + kLanes <= n; i += kLanes) m[0] = vmax(m[0], vload(p + i));
  if (i < n) m[1] = vmax(m[1], vload_partial(p + i, static_cast<int>(n - i)));
  std::memcpy(out, m, sizeof(m));
}

float chunk_max(const float* lane_maxima) {
  vfloat m[4];
  std::memcpy(m, lane_maxima, sizeof(m));
  return hmax(vmax(vmax(m[0], m[1]), vmax(m[2], m[3])));
}

// A value v such that the chunk holds at least k elements >= v (so no element
// below v can be among the row's top k): the k-th largest lane maximum, as k
// disjoint subsets reach it. -inf when k > kLaneMaxima.
float chunk_kth_bound(float* lane_maxima, int64_t k) {
  if (k > kLaneMaxima) return -std::numeric_limits<float>::infinity();
  std::nth_element(lane_maxima, lane_maxima + (k - 1), lane_maxima + kLaneMaxima,
                   [](float a, float b) { return a > b; });
  return lane_maxima[k - 1];
}

// sum exp(p[i] - m) over the chunk; m is finite.
float chunk_exp_sum(const float* p, int64_t n, float m) {
  const vfloat mv = vbroadcast(m);
  vfloat s0 = vbroadcast(0.0f), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    s0 += vexp(vload(p + i) - mv);
    s1 += vexp(vload(p + i + kLanes) - mv);
    s2 += vexp(vload(p + i + 2 * kLanes) - mv);
    s3 += vexp(vload(p + i + 3 * kLanes) - mv);
  }
  for (; i + kLanes <= n; i += kLanes) s0 += vexp(vload(p + i) - mv);
  if (i < n) s1 += vexp(vload_partial(p + i, static_cast<int>(n - i)) - mv);
  return hsum((s0 + s1) + (s2 + s3));
}

// Offers p[i] (column first_col + i) for i in [from, n) with p[i] > filter to
// the heap. `filter` starts at or above the heap's threshold (an element at
// or below that can never enter) and rises with it.
void chunk_select(const float* p, int64_t from, int64_t n, int64_t first_col, Key* heap, int64_t k, float filter) {
  const auto offer = [&](int64_t j) {
    sift_down(heap, k, make_key(p[j], first_col + j));
    filter = std::max(filter, key_value(heap[0]));
  };
  int64_t i = from;
  for (; i + kLanes <= n; i += kLanes) {
    if (!any_greater(vload(p + i), filter)) continue;
    for (int64_t j = i; j < i + kLanes; ++j)
      if (p[j] > filter) offer(j);
  }
  for (; i < n; ++i)
    if (p[i] > filter) offer(i);
}

// heap: scratch of k + 1 keys.
void row_softmax_topk(const float* x, int64_t vocab, int64_t k, Key* heap, float* probs, int32_t* indices) {
  for (int64_t i = 0; i < k; ++i) heap[i] = make_key(x[i], i);
  heap[k] = ~Key{0};
  std::make_heap(heap, heap + k, std::greater<Key>());  // greater: a min-heap
  float threshold = key_value(heap[0]);

  float m = -std::numeric_limits<float>::infinity();
  double s = 0.0;
  for (int64_t c0 = 0; c0 < vocab; c0 += kChunk) {
    const int64_t n = std::min(kChunk, vocab - c0);
    const float* p = x + c0;
    float lane_maxima[kLaneMaxima];
    chunk_lane_maxima(p, n, lane_maxima);
    const float cm = chunk_max(lane_maxima);
    if (cm > m) {
      // m = -inf means s = 0: skip the exp, whose argument would be -inf - cm.
      s = (m == -std::numeric_limits<float>::infinity())
              ? 0.0
              : s * std::exp(static_cast<double>(m) - static_cast<double>(cm));
      m = cm;
    }
    // With m = -inf every element so far is -inf: nothing to add, and
    // x - m would be NaN.
    if (m != -std::numeric_limits<float>::infinity()) s += chunk_exp_sum(p, n, m);
    // Columns below k already seeded the heap.
    if (cm > threshold && c0 + n > k) {
      // The seed's threshold is low, and most heap insertions of a row would
      // happen in its first chunk (about k ln(n/k) of them). In that chunk
      // only elements >= the chunk's k-th bound can win, which cuts them to
      // about k. Later chunks face the heap's own, better, threshold.
      // The bound costs a selection over the lane maxima: worth it only when
      // the chunk is long and k small enough for the bound to be tight.
      float filter = threshold;
      if (c0 == 0 && n >= 4 * kLaneMaxima && k <= kLaneMaxima / 2)
        filter =
            std::max(filter, std::nextafter(chunk_kth_bound(lane_maxima, k), -std::numeric_limits<float>::infinity()));
      chunk_select(p, std::max<int64_t>(0, k - c0), n, c0, heap, k, filter);
      threshold = key_value(heap[0]);
    }
  }

  std::sort(heap, heap + k, std::greater<Key>());
  for (int64_t j = 0; j < k; ++j) {
    // exp(-inf) = 0 gives masked winners a probability of exactly 0.
    const double value = static_cast<double>(key_value(heap[j]));
    probs[j] = static_cast<float>(std::exp(value - static_cast<double>(m)) / s);
    indices[j] = key_column(heap[j]);
  }
}

struct Job {
  const float* logits;
  int64_t rows, vocab, k, rows_per_task;
  float* probs;
  int32_t* indices;
  Key* scratch;  // [participants, k + 1]
};

void run_rows(void* context, int64_t task, int participant) {
  const Job& job = *static_cast<const Job*>(context);
  const int64_t begin = task * job.rows_per_task;
  const int64_t end = std::min(job.rows, begin + job.rows_per_task);
  Key* heap = job.scratch + participant * (job.k + 1);
  for (int64_t r = begin; r < end; ++r)
    row_softmax_topk(job.logits + r * job.vocab, job.vocab, job.k, heap, job.probs + r * job.k,
                     job.indices + r * job.k);
}

}  // namespace

void softmax_topk(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices) {
  if (rows < 1 || k < 1 || k > vocab || vocab > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument("softmax_topk: need rows >= 1 and 1 <= k <= vocab <= INT32_MAX");

  const bool parallel = rows > 1 && rows * vocab >= kMinParallelElements;
  ThreadPool* pool = parallel ? &ThreadPool::instance() : nullptr;
  const int participants = pool ? pool->size() : 1;

  // Cached per calling thread: a fresh multi-page allocation per call would
  // be page-faulted in again every time.
  thread_local std::vector<Key> scratch;
  const size_t need = static_cast<size_t>(participants) * static_cast<size_t>(k + 1);
  if (scratch.size() < need) scratch.resize(need);

  Job job{logits, rows, vocab, k, 1, probs, indices, scratch.data()};
  if (!pool) {
    job.rows_per_task = rows;
    run_rows(&job, 0, 0);
    return;
  }
  // About 8 tasks per thread balance uneven rows; a task is never smaller
  // than one row.
  const int64_t tasks = std::min<int64_t>(rows, 8 * static_cast<int64_t>(participants));
  job.rows_per_task = (rows + tasks - 1) / tasks;
  pool->run((rows + job.rows_per_task - 1) / job.rows_per_task, run_rows, &job);
}

}  // namespace softmax_topk::cpu
