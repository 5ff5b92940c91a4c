// Device helpers shared by the layernorm kernels: how a group of threads owns
// the columns of a row, vector loads and stores, and sums over a row group.
//
// A row is handled by TPR threads (a power of two). TPR <= 32: a block of
// kSubwarpBlock threads holds several row groups, each an aligned range of
// lanes of one warp, and sums use shuffles only. TPR > 32: the block is the
// row group and sums go through shared memory.
#ifndef LAYERNORM_CUDA_ROW_ACCESS_CUH
#define LAYERNORM_CUDA_ROW_ACCESS_CUH

#include <cuda_runtime.h>

#include <cstdint>

namespace layernorm::cuda::detail {

constexpr int kSubwarpBlock = 256;

__host__ __device__ constexpr int block_threads(int tpr) { return tpr <= 32 ? kSubwarpBlock : tpr; }

// VEC consecutive floats of a row: VEC = 4 moves as one float4 (rows and
// base pointers 16-byte aligned), VEC = 1 as a scalar (any dim).
template <int VEC>
struct Pack {
  float v[VEC];
};

// kStream: read once, evict first (__ldcs); otherwise through L1/L2 (__ldg),
// for data read again soon (gamma, beta, a row re-read in a second pass).
template <int VEC, bool kStream>
__device__ __forceinline__ Pack<VEC> load(const float* p) {
  Pack<VEC> out;
  if constexpr (VEC == 4) {
    const float4 t = kStream ? __ldcs(reinterpret_cast<const float4*>(p)) : __ldg(reinterpret_cast<const float4*>(p));
    out.v[0] = t.x;
    out.v[1] = t.y;
    out.v[2] = t.z;
    out.v[3] = t.w;
  } else {
    out.v[0] = kStream ? __ldcs(p) : __ldg(p);
  }
  return out;
}

// Outputs are written once and not read back by the kernel: streaming stores.
template <int VEC>
__device__ __forceinline__ void store(float* p, const Pack<VEC>& in) {
  if constexpr (VEC == 4)
    __stcs(reinterpret_cast<float4*>(p), make_float4(in.v[0], in.v[1], in.v[2], in.v[3]));
  else
    __stcs(p, in.v[0]);
}

// *p += a, for accumulators in shared or global memory that only the calling
// thread touches (p 16-byte aligned when VEC = 4: one 128-bit access each way).
template <int VEC>
__device__ __forceinline__ void accumulate(float* p, const Pack<VEC>& a) {
  if constexpr (VEC == 4) {
    float4* q = reinterpret_cast<float4*>(p);
    float4 t = *q;
    t.x += a.v[0];
    t.y += a.v[1];
    t.z += a.v[2];
    t.w += a.v[3];
    *q = t;
  } else {
    *p += a.v[0];
  }
}

// Calls f(i, v) for the vectors v of a row of nvec vectors owned by thread t
// of its row group: v = t + i * TPR. VPT > 0: at most VPT of them, i is a
// compile-time slot (a register cache index after unrolling); the caller
// guarantees nvec <= VPT * TPR. VPT == 0: any number, i = 0.
template <int TPR, int VPT, class F>
__device__ __forceinline__ void for_owned(int t, int nvec, F&& f) {
  if constexpr (VPT > 0) {
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int v = t + i * TPR;
      if (v < nvec) f(i, v);
    }
  } else {
    for (int v = t; v < nvec; v += TPR) f(0, v);
  }
}

// Sum of `value` over the TPR threads of the calling row group; every thread
// of the group gets the same total (the same additions in the same order).
// Every thread of the block must call it (shuffles use the full mask; the
// block path has a barrier). scratch: [32] in shared memory, used when
// TPR > 32; calls must alternate between two scratch arrays, so that the
// barrier of one call separates the reads of the previous from the writes of
// the next.
template <int TPR, class T>
__device__ __forceinline__ T group_sum(T value, T* scratch) {
  constexpr int kWidth = TPR < 32 ? TPR : 32;
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if constexpr (TPR > 32) {
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
    __syncthreads();
    value = scratch[0];
#pragma unroll
    for (int w = 1; w < TPR / 32; ++w) value += scratch[w];
  }
  return value;
}

// group_sum of two values at once (one barrier instead of two).
template <int TPR>
__device__ __forceinline__ void group_sum_pair(float& a, float& b, float2* scratch) {
  constexpr int kWidth = TPR < 32 ? TPR : 32;
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) {
    a += __shfl_xor_sync(0xffffffffu, a, offset);
    b += __shfl_xor_sync(0xffffffffu, b, offset);
  }
  if constexpr (TPR > 32) {
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = make_float2(a, b);
    __syncthreads();
    a = scratch[0].x;
    b = scratch[0].y;
#pragma unroll
    for (int w = 1; w < TPR / 32; ++w) {
      a += scratch[w].x;
      b += scratch[w].y;
    }
  }
}

}  // namespace layernorm::cuda::detail

#endif  // LAYERNORM_CUDA_ROW_ACCESS_CUH
