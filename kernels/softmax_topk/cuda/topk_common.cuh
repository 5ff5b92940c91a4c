// Device building blocks of the CUDA softmax_topk kernels: ordered 64-bit
// candidate keys, the online-softmax state, group-wide reduction and a
// shared-memory bitonic sort. A "group" is either one warp (THREADS = 32,
// synchronised by __syncwarp) or a whole block (synchronised by
// __syncthreads); every function taking THREADS must be called by all
// threads of the group, convergently.
#ifndef SOFTMAX_TOPK_CUDA_TOPK_COMMON_CUH
#define SOFTMAX_TOPK_CUDA_TOPK_COMMON_CUH

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace softmax_topk::cuda::detail {

constexpr unsigned kFullMask = 0xffffffffu;

// A candidate is one integer: the float's bits mapped to an unsigned order in
// the high half, the complement of its column in the low half. A larger key is
// a larger value, or an equal value with a lower column, so sorting keys in
// descending order ranks candidates by (value desc, column asc), and ties
// between equal logits resolve deterministically. Key 0 is the sentinel below
// every real key (it would need the float bits 0xffffffff, a NaN).
using Key = unsigned long long;
constexpr Key kSentinelKey = 0;

__device__ __forceinline__ Key make_key(float value, int32_t column) {
  const uint32_t bits = __float_as_uint(value);
  const uint32_t ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<Key>(ordered) << 32) | static_cast<Key>(~static_cast<uint32_t>(column));
}

__device__ __forceinline__ float key_value(Key key) {
  const uint32_t ordered = static_cast<uint32_t>(key >> 32);
  return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered);
}

__device__ __forceinline__ int32_t key_column(Key key) {
  return static_cast<int32_t>(~static_cast<uint32_t>(key & 0xffffffffull));
}

// Online softmax over a set of elements: their max and sum(exp(x - max)).
// max = -inf means "no finite element yet", and then sum = 0.
struct SoftmaxState {
  float max;
  float sum;
};

__device__ __forceinline__ SoftmaxState empty_state() { return SoftmaxState{-INFINITY, 0.0f}; }

__device__ __forceinline__ SoftmaxState combine(SoftmaxState a, SoftmaxState b) {
  const float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return empty_state();  // -inf - -inf would be NaN
  // An empty side has max = -inf: exp(-inf) = 0 times its sum 0.
  return SoftmaxState{m, a.sum * __expf(a.max - m) + b.sum * __expf(b.max - m)};
}

// Folds 4 elements (-inf for absent ones) into a thread's state: one rescale
// at most, then 4 exponentials against the (new) max. __expf is ex2.approx:
// a few ulp, far inside the 1e-4 tolerance, and it only feeds the sum.
__device__ __forceinline__ void accumulate(SoftmaxState& st, float4 v) {
  const float cm = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
  if (cm > st.max) {
    st.sum *= __expf(st.max - cm);  // st.max = -inf: sum is 0 and stays 0
    st.max = cm;
  }
  if (st.max != -INFINITY)
    st.sum += (__expf(v.x - st.max) + __expf(v.y - st.max)) + (__expf(v.z - st.max) + __expf(v.w - st.max));
}

template <int THREADS>
__device__ __forceinline__ void group_sync() {
  static_assert(THREADS == 32 || THREADS % 32 == 0, "a group is a warp or whole warps");
  if constexpr (THREADS == 32) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

// A barrier of the group that also tells every thread whether `pred` held
// for any thread of it.
template <int THREADS>
__device__ __forceinline__ bool group_sync_any(bool pred) {
  static_assert(THREADS == 32 || THREADS % 32 == 0, "a group is a warp or whole warps");
  if constexpr (THREADS == 32) {
    __syncwarp();
    return __any_sync(kFullMask, pred);
  } else {
    return __syncthreads_or(pred ? 1 : 0) != 0;
  }
}

__device__ __forceinline__ float warp_max(float x) {
  for (int offset = 16; offset > 0; offset >>= 1) x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}

__device__ __forceinline__ SoftmaxState warp_reduce(SoftmaxState st) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const SoftmaxState other{__shfl_xor_sync(kFullMask, st.max, offset), __shfl_xor_sync(kFullMask, st.sum, offset)};
    st = combine(st, other);
  }
  return st;
}

// Every thread of the group gets the group's combined state. scratch:
// [THREADS / 32] in shared memory (unused for a warp).
template <int THREADS>
__device__ SoftmaxState group_reduce(SoftmaxState st, SoftmaxState* scratch, int tid) {
  st = warp_reduce(st);
  if constexpr (THREADS == 32) {
    return st;
  } else {
    static_assert(THREADS / 32 <= 32, "one warp combines the warps' partial states");
    if ((tid & 31) == 0) scratch[tid >> 5] = st;
    __syncthreads();
    // Every warp combines the partials in the same order: same result
    // everywhere, no broadcast needed.
    SoftmaxState total = (tid & 31) < THREADS / 32 ? scratch[tid & 31] : empty_state();
    total = warp_reduce(total);
    __syncthreads();  // scratch may be reused after this
    return total;
  }
}

// Sorts keys[0, n) in descending order; n is a power of two. The group must
// have synchronised after writing keys; returns synchronised.
template <int THREADS>
__device__ void bitonic_sort_desc(Key* keys, int n, int tid) {
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = tid; i < n / 2; i += THREADS) {
        // The i-th pair of this stage: lo has the `stride` bit clear.
        const int lo = 2 * i - (i & (stride - 1));
        const int hi = lo + stride;
        const Key a = keys[lo];
        const Key b = keys[hi];
        // Runs of `size` alternate direction; the last stage (size = n) is
        // all descending.
        const bool descending = (lo & size) == 0;
        if (descending ? (a < b) : (a > b)) {
          keys[lo] = b;
          keys[hi] = a;
        }
      }
      group_sync<THREADS>();
    }
  }
}

}  // namespace softmax_topk::cuda::detail

#endif  // SOFTMAX_TOPK_CUDA_TOPK_COMMON_CUH
