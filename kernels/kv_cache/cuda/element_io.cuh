// Storage formats of the CUDA cache: loads of VEC consecutive K/V elements
// (one vector instruction per lane), and stores from float on append.
//   float:  VEC 4 -> one 16-byte load, VEC 2 -> 8 bytes
//   __half: VEC 4 -> 8 bytes,          VEC 2 -> 4 bytes
// Callers guarantee alignment: a tile row starts at a multiple of head_dim
// elements and a lane's slice at a multiple of VEC.
#ifndef KV_CACHE_CUDA_ELEMENT_IO_CUH
#define KV_CACHE_CUDA_ELEMENT_IO_CUH

#include <cuda_fp16.h>

namespace kvcache::cuda {

template <typename T>
struct Storage;

template <>
struct Storage<float> {
  static __device__ __forceinline__ float from_float(float x) { return x; }
  template <int VEC>
  static __device__ __forceinline__ void load(const float* p, float* out) {
    if constexpr (VEC == 4) {
      const float4 v = *reinterpret_cast<const float4*>(p);
      out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
    } else if constexpr (VEC == 2) {
      const float2 v = *reinterpret_cast<const float2*>(p);
      out[0] = v.x, out[1] = v.y;
    } else {
#pragma unroll
      for (int i = 0; i < VEC; ++i) out[i] = p[i];
    }
  }
};

template <>
struct Storage<__half> {
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
  template <int VEC>
  static __device__ __forceinline__ void load(const __half* p, float* out) {
    if constexpr (VEC % 2 == 0) {
      // Pairs of halves as __half2: VEC / 2 32-bit words, one vector load.
      __half2 h[VEC / 2];
      if constexpr (VEC == 4) {
        const uint2 w = *reinterpret_cast<const uint2*>(p);
        h[0] = *reinterpret_cast<const __half2*>(&w.x);
        h[1] = *reinterpret_cast<const __half2*>(&w.y);
      } else {
#pragma unroll
        for (int i = 0; i < VEC / 2; ++i) h[i] = reinterpret_cast<const __half2*>(p)[i];
      }
#pragma unroll
      for (int i = 0; i < VEC / 2; ++i) {
        const float2 f = __half22float2(h[i]);
        out[2 * i] = f.x, out[2 * i + 1] = f.y;
      }
    } else {
#pragma unroll
      for (int i = 0; i < VEC; ++i) out[i] = __half2float(p[i]);
    }
  }
};

}  // namespace kvcache::cuda

#endif  // KV_CACHE_CUDA_ELEMENT_IO_CUH
