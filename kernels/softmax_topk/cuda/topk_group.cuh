// The candidate buffer: how a group (a warp or a block) keeps the top k of a
// stream of elements it reads once.
//
// The buffer holds up to CAP keys in shared memory. A tile of the stream
// (at most 4 elements per thread) is filtered against a threshold and the
// survivors are appended with one shared atomic per warp. After each tile, if
// the next tile could overflow the buffer, the group compacts it: bitonic sort
// (descending), keep the first k, threshold = the k-th value. Until the first
// compaction there is no threshold and everything is accepted, so that -inf
// entries can fill the answer when a row has fewer than k finite ones; the
// first compaction comes as soon as k candidates exist, so that the filter
// bites early. Afterwards an element equal to the threshold is dropped: k
// candidates at least as good are already kept (ties may go either way).
// Invariant: the buffer always holds the top k of everything offered so far
// (exactly, in the order value desc, column asc), and count <= CAP - TILE
// before each tile.
//
// Two things keep the group's barriers few, since a block streams far more
// tiles than it ever compacts:
// - after a tile, one barrier that also says whether any thread appended;
//   when none did (most tiles once the filter bites) the count is unchanged
//   and need not be read, which would take a barrier on each side;
// - a block whose k is at most its number of warps seeds the filter in its
//   first tile: the k-th largest of the warps' maxima is a lower bound of
//   the k-th largest element (k disjoint subsets each hold an element at
//   least that large), so only elements at or above it are offered, at
//   least k of them, and the first compaction sorts a handful of keys
//   instead of the whole tile.
#ifndef SOFTMAX_TOPK_CUDA_TOPK_GROUP_CUH
#define SOFTMAX_TOPK_CUDA_TOPK_GROUP_CUH

#include "topk_common.cuh"

namespace softmax_topk::cuda::detail {

template <int CAP>
struct CandidateBuffer {
  static_assert((CAP & (CAP - 1)) == 0, "the bitonic sort needs a power of two");
  Key keys[CAP];
  int count;           // keys[0, count) are candidates
  int has_threshold;   // 0 until the first compaction
  float threshold;     // the k-th best value kept, once has_threshold
  float warp_max[32];  // [warps] the first tile's maxima, for the seed
};

// Called by thread 0 of the group before anything else; the group then syncs.
template <int CAP>
__device__ __forceinline__ void reset(CandidateBuffer<CAP>& buf) {
  buf.count = 0;
  buf.has_threshold = 0;
  buf.threshold = -INFINITY;
}

// Appends keys[i] where pass[i]; returns whether this thread appended any.
// Called by all 32 lanes of a warp: the warp's survivors get consecutive
// slots from one atomicAdd (a warp prefix sum gives each lane its offset).
template <int CAP>
__device__ __forceinline__ bool append(CandidateBuffer<CAP>& buf, const Key (&keys)[4], const bool (&pass)[4]) {
  const int n = int(pass[0]) + int(pass[1]) + int(pass[2]) + int(pass[3]);
  if (!__any_sync(kFullMask, n != 0)) return false;  // the common case once filtering
  const int lane = threadIdx.x & 31;
  int inclusive = n;
  for (int d = 1; d < 32; d <<= 1) {
    const int below = __shfl_up_sync(kFullMask, inclusive, d);
    if (lane >= d) inclusive += below;
  }
  int base = 0;
  if (lane == 31) base = atomicAdd(&buf.count, inclusive);
  base = __shfl_sync(kFullMask, base, 31);
  int slot = base + inclusive - n;
  for (int i = 0; i < 4; ++i)
    if (pass[i]) buf.keys[slot++] = keys[i];
  return n != 0;
}

// Folds up to 4 consecutive elements (columns first_column...; -inf beyond
// n_valid) into the thread's softmax state and offers them to the buffer;
// returns whether this thread appended any. While the buffer has no
// threshold, elements below `floor` are known to be outside the top k
// (-inf: none is).
template <int CAP>
__device__ __forceinline__ bool consume(CandidateBuffer<CAP>& buf, SoftmaxState& st, float4 v, int64_t first_column,
                                        int n_valid, float floor = -INFINITY) {
  accumulate(st, v);
  // Both fields change only inside compact(), between group barriers.
  const bool open = buf.has_threshold == 0;
  const float threshold = buf.threshold;
  const float values[4] = {v.x, v.y, v.z, v.w};
  Key keys[4];
  bool pass[4];
  for (int i = 0; i < 4; ++i) {
    pass[i] = i < n_valid && (open ? values[i] >= floor : values[i] > threshold);
    keys[i] = make_key(values[i], static_cast<int32_t>(first_column + i));
  }
  return append(buf, keys, pass);
}

// The k-th largest of the group's warp maxima of one tile (k <= warps), a
// lower bound of the k-th largest element; -inf when fewer than k warps saw
// a finite element. Every thread computes it from the same shared maxima, so
// one barrier suffices.
template <int THREADS, int CAP>
__device__ __forceinline__ float seed_floor(CandidateBuffer<CAP>& buf, float4 v, int n_valid, int k, int tid) {
  constexpr int kWarps = THREADS / 32;
  static_assert(kWarps <= 32, "one maximum per warp");
  const float values[4] = {v.x, v.y, v.z, v.w};
  float mine = -INFINITY;
  for (int i = 0; i < 4; ++i)
    if (i < n_valid) mine = fmaxf(mine, values[i]);
  mine = warp_max(mine);
  if ((tid & 31) == 0) buf.warp_max[tid >> 5] = mine;
  group_sync<THREADS>();
  // Rank by (value desc, warp asc): the maximum of rank k - 1 is the seed.
  float seed = -INFINITY;
  for (int j = 0; j < kWarps; ++j) {
    const float m = buf.warp_max[j];
    int rank = 0;
    for (int i = 0; i < kWarps; ++i) {
      const float other = buf.warp_max[i];
      rank += (other > m || (other == m && i < j)) ? 1 : 0;
    }
    if (rank == k - 1) seed = m;
  }
  return seed;
}

// Sorts the buffer and keeps its best k (all of it when count < k).
template <int THREADS, int CAP>
__device__ void compact(CandidateBuffer<CAP>& buf, int count, int k, int tid) {
  int n = 1;
  while (n < count) n <<= 1;  // count <= CAP, a power of two: n <= CAP
  for (int i = count + tid; i < n; i += THREADS) buf.keys[i] = kSentinelKey;
  group_sync<THREADS>();
  bitonic_sort_desc<THREADS>(buf.keys, n, tid);
  if (tid == 0 && count >= k) {
    buf.count = k;
    buf.threshold = key_value(buf.keys[k - 1]);
    buf.has_threshold = 1;
  }
  group_sync<THREADS>();
}

// After a tile (`appended`: this thread appended in it): compacts when the
// next tile (<= 4 * THREADS elements) could overflow, or when the first k
// candidates exist. Every thread must read the same count, hence a barrier
// before and after reading it (the next tile's appends change it); when no
// thread appended, the count is what the last check left, and the first
// barrier is the only one.
template <int THREADS, int CAP>
__device__ __forceinline__ void after_tile(CandidateBuffer<CAP>& buf, int k, int tid, bool appended) {
  static_assert(CAP >= 8 * THREADS, "room for k <= CAP - 4 * THREADS plus one tile");
  if (!group_sync_any<THREADS>(appended)) return;
  const int count = buf.count;
  const bool open = buf.has_threshold == 0;
  group_sync<THREADS>();
  if (count > CAP - 4 * THREADS || (open && count >= k)) compact<THREADS>(buf, count, k, tid);
}

// The final sort; returns how many keys are valid (min(count, k)).
template <int THREADS, int CAP>
__device__ int finish(CandidateBuffer<CAP>& buf, int k, int tid) {
  group_sync<THREADS>();
  const int count = buf.count;
  group_sync<THREADS>();
  compact<THREADS>(buf, count, k, tid);
  return count < k ? count : k;
}

// Streams columns [begin, end) of `row` through the group: each thread's
// softmax state `st` and the group's buffer. Reads every element once:
// float4 loads from the first 16-byte aligned column (a row starts anywhere
// when vocab % 4 != 0), the <= 3 leading and <= 3 trailing columns as
// scalars, one per thread; the float4s of the next two tiles are loaded
// before the current one is processed. Requires k <= CAP - 4 * THREADS.
template <int THREADS, int CAP>
__device__ void scan_columns(const float* __restrict__ row, int64_t begin, int64_t end, int k,
                             CandidateBuffer<CAP>& buf, SoftmaxState& st, int tid) {
  const float* p = row + begin;
  const int64_t n = end - begin;
  const int64_t to_aligned = static_cast<int64_t>(((16u - (reinterpret_cast<uintptr_t>(p) & 15u)) & 15u) / 4u);
  const int64_t head = to_aligned < n ? to_aligned : n;
  const int64_t n_vec = (n - head) / 4;
  const int64_t tail_begin = head + 4 * n_vec;
  const int64_t n_edge = head + (n - tail_begin);  // <= 6 < THREADS

  if (n_edge > 0) {  // uniform over the group
    const bool valid = tid < n_edge;
    const int64_t c = tid < head ? tid : tail_begin + (tid - head);
    const float x = valid ? p[c] : -INFINITY;
    const bool appended = consume(buf, st, make_float4(x, -INFINITY, -INFINITY, -INFINITY), begin + c, valid ? 1 : 0);
    after_tile<THREADS>(buf, k, tid, appended);
  }

  // Two tiles are in flight while one is processed: a thread waits at the
  // tile barriers with two loads outstanding, which keeps enough bytes in
  // flight per SM to cover the memory latency.
  const float4* vp = reinterpret_cast<const float4*>(p + head);
  const float4 none = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
  float4 current = tid < n_vec ? __ldcs(vp + tid) : none;
  float4 next = THREADS + tid < n_vec ? __ldcs(vp + THREADS + tid) : none;
  // Uniform over the group: the flag only changes in compact(), between barriers.
  const bool seeded = THREADS > 32 && k <= THREADS / 32 && buf.has_threshold == 0;
  for (int64_t base = 0; base < n_vec; base += THREADS) {  // uniform trip count
    const int64_t ahead = base + 2 * THREADS + tid;
    const float4 prefetched = ahead < n_vec ? __ldcs(vp + ahead) : none;
    const int64_t v = base + tid;
    const int n_valid = v < n_vec ? 4 : 0;
    const float floor = seeded && base == 0 ? seed_floor<THREADS>(buf, current, n_valid, k, tid) : -INFINITY;
    const bool appended = consume(buf, st, current, begin + head + 4 * v, n_valid, floor);
    after_tile<THREADS>(buf, k, tid, appended);
    current = next;
    next = prefetched;
  }
}

// Writes the answer of one row: keys[0, valid) are its winners, best first;
// probability = exp(x - max) / sum with the row's combined state.
template <int THREADS, int CAP>
__device__ void write_answer(const CandidateBuffer<CAP>& buf, int valid, int k, SoftmaxState row,
                             float* __restrict__ probs, int32_t* __restrict__ indices, int tid) {
  for (int j = tid; j < k; j += THREADS) {
    const Key key = j < valid ? buf.keys[j] : kSentinelKey;
    // exp(-inf) = 0: masked winners get probability 0.
    probs[j] = expf(key_value(key) - row.max) / row.sum;
    indices[j] = key_column(key);
  }
}

}  // namespace softmax_topk::cuda::detail

#endif  // SOFTMAX_TOPK_CUDA_TOPK_GROUP_CUH
