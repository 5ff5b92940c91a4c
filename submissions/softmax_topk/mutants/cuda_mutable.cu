// A plausible mid-level CUDA softmax + top-k, the common source of the CUDA
// mutants. Each mutant's submission.json defines one MUTANT_* macro that
// switches on one realistic bug; with none defined the implementation is
// correct (it is never shipped that way: cuda-fast and cuda-naive are).
//
// Design: a warp per row, kRowsPerBlock rows per block. Each lane reads its
// share of the row (scalar head up to 16-byte alignment, float4 body, scalar
// tail), keeps an online max/sum and its own sorted top-k list in shared
// memory ([row][rank][lane], conflict-free); the warp combines the sums with
// shuffles and merges the 32 lists k-way (a warp argmax per output rank). The
// block stages its rows' answers in shared memory and stores them together
// (contiguous rows: coalesced), so every warp must reach that barrier: a warp
// past the last row works on a copy of the last row and stores nothing.
// k <= kMaxK (64); larger k is declared unsupported.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "abi_support.h"
#include "cuda_support.h"
#include "softmax_topk.h"

namespace {

constexpr int kRowsPerBlock = 2;
constexpr int kThreads = 32 * kRowsPerBlock;
constexpr int kMaxK = 64;
using Key = unsigned long long;

// (value, column) as one integer, larger = better; 0 is below every real key.
__device__ Key make_key(float value, int64_t column) {
  const uint32_t bits = __float_as_uint(value);
  const uint32_t ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<Key>(ordered) << 32) | static_cast<Key>(~static_cast<uint32_t>(column));
}

__device__ float key_value(Key key) {
  const uint32_t ordered = static_cast<uint32_t>(key >> 32);
  return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered);
}

__device__ int32_t key_column(Key key) { return static_cast<int32_t>(~static_cast<uint32_t>(key & 0xffffffffull)); }

#ifdef MUTANT_NO_MAX_SUBTRACTION
constexpr float kInitialMax = 0.0f;  // the "max" stays 0: exp(x - 0)
#else
constexpr float kInitialMax = -INFINITY;
#endif

// Folds x into the lane's running max m and sum s of exp(. - m).
__device__ void fold(float x, float& m, float& s) {
#ifdef MUTANT_NO_MAX_SUBTRACTION
  // Bug: exp(x) without the max shift: fine for logits of a few units, inf
  // (then NaN or 0 probabilities) once logits exceed ~88.
  (void)m;
  s += expf(x);
#else
  if (x > m) {
    s = s * expf(m - x) + 1.0f;  // m = -inf: s is 0, exp(-inf) = 0
    m = x;
  } else if (x != -INFINITY) {  // -inf - -inf would be NaN
    s += expf(x - m);
  }
#endif
}

// The lane's list: list[rank * 32] (the caller offsets by lane), best first,
// `len` entries.
__device__ void insert(Key* list, int& len, int k, Key key) {
  int pos;
  if (len < k) {
    pos = len++;
  } else if (key > list[(k - 1) * 32]) {
    pos = k - 1;
  } else {
    return;
  }
  while (pos > 0 && list[(pos - 1) * 32] < key) {
    list[pos * 32] = list[(pos - 1) * 32];
    --pos;
  }
  list[pos * 32] = key;
}

__global__ void __launch_bounds__(kThreads)
    softmax_topk_rows(const float* __restrict__ logits, int64_t rows, int64_t vocab, int k, float* __restrict__ probs,
                      int32_t* __restrict__ indices) {
  __shared__ Key lists[kRowsPerBlock][kMaxK][32];
  __shared__ float staged_probs[kRowsPerBlock][kMaxK];
  __shared__ int32_t staged_indices[kRowsPerBlock][kMaxK];
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;

#ifdef MUTANT_ROWS_MIXED
  // Bug: the row of a warp is computed grid-strided (copied from a
  // grid-stride kernel) while the staged store below is block-major: rows'
  // answers land in other rows' slots.
  const int64_t row = blockIdx.x + static_cast<int64_t>(warp) * gridDim.x;
#else
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + warp;
#endif
  const float* x = logits + (row < rows ? row : rows - 1) * vocab;

  float m = kInitialMax, s = 0.0f;
  Key* list = &lists[warp][0][lane];
  int len = 0;
  const auto visit = [&](float value, int64_t column) {
    fold(value, m, s);
    insert(list, len, k, make_key(value, column));
  };
  const int64_t to_aligned = static_cast<int64_t>(((16u - (reinterpret_cast<uintptr_t>(x) & 15u)) & 15u) / 4u);
  const int64_t head = to_aligned < vocab ? to_aligned : vocab;
  const int64_t n_vec = (vocab - head) / 4;
  const int64_t tail_begin = head + 4 * n_vec;
  if (lane < head) visit(x[lane], lane);
  const float4* vx = reinterpret_cast<const float4*>(x + head);
  for (int64_t v = lane; v < n_vec; v += 32) {
    const float4 q = __ldg(vx + v);
    const int64_t c = head + 4 * v;
    visit(q.x, c);
    visit(q.y, c + 1);
    visit(q.z, c + 2);
    visit(q.w, c + 3);
  }
#ifndef MUTANT_VECTOR_TAIL_SKIPPED
  for (int64_t c = tail_begin + lane; c < vocab; c += 32) visit(x[c], c);
#else
  (void)tail_begin;  // bug: the vocab % 4 columns after the float4 body are never read
#endif

  for (int offset = 16; offset > 0; offset >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, offset);
    const float os = __shfl_xor_sync(0xffffffffu, s, offset);
    const float nm = fmaxf(m, om);
    s = nm == -INFINITY ? 0.0f : s * expf(m - nm) + os * expf(om - nm);
    m = nm;
  }

  // k-way merge: each rank, the warp's best list head wins and that list
  // advances. Keys are unique (columns are), so exactly one lane wins.
  int next = 0;
  for (int j = 0; j < k; ++j) {
    const Key mine = next < len ? list[next * 32] : 0;
    Key best = mine;
    for (int offset = 16; offset > 0; offset >>= 1) {
      const Key other = __shfl_xor_sync(0xffffffffu, best, offset);
      best = other > best ? other : best;
    }
    if (best != 0 && mine == best) {
#ifdef MUTANT_INCOMPLETE_MERGE
      // Bug: the winning lane's list is retired instead of advanced, so each
      // lane contributes at most its best candidate.
      next = len;
#else
      ++next;
#endif
    }
    if (lane == 0) {
      staged_probs[warp][j] = expf(key_value(best) - m) / s;
      staged_indices[warp][j] = key_column(best);
    }
  }

  __syncthreads();
  const int64_t first_row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock;
#ifdef MUTANT_LAST_BLOCK_OOB
  // Bug: the block always stores kRowsPerBlock rows; the last block of a grid
  // whose rows are not a multiple of it writes past the end of the outputs.
  const int64_t rows_here = kRowsPerBlock;
#else
  const int64_t rows_here = rows - first_row < kRowsPerBlock ? rows - first_row : kRowsPerBlock;
#endif
  for (int64_t i = threadIdx.x; i < rows_here * k; i += kThreads) {
    const int64_t r = i / k;
    const int64_t j = i % k;
    probs[(first_row + r) * k + j] = staged_probs[r][j];
    indices[(first_row + r) * k + j] = staged_indices[r][j];
  }
}

harness_status run(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices,
                   void* stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  if (k > kMaxK) return softmax_topk_abi::fail(HARNESS_STATUS_UNSUPPORTED, "k above 64");
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  if (blocks > 0x7fffffff) return softmax_topk_abi::fail(HARNESS_STATUS_UNSUPPORTED, "too many rows for one grid");
  softmax_topk_rows<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(logits, rows, vocab, static_cast<int>(k),
                                                                            probs, indices);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return softmax_topk_abi::cuda_fail("softmax_topk_rows", err);
  return HARNESS_STATUS_OK;
}

}  // namespace

SOFTMAX_TOPK_EXPORT_ABI(run)
