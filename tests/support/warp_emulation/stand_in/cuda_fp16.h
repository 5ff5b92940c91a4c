// The stand-in <cuda_fp16.h> of device code built for the warp emulator:
// __half as IEEE binary16 (the host compiler's _Float16), conversions
// rounding to nearest even as the device's _rn ones do.
#ifndef WARP_EMULATION_STAND_IN_CUDA_FP16_H
#define WARP_EMULATION_STAND_IN_CUDA_FP16_H

#include "warp_emulation/device_builtins.h"

struct __half {
  _Float16 value;
};
struct alignas(4) __half2 {
  __half x, y;
};
static_assert(sizeof(__half) == 2 && sizeof(__half2) == 4, "binary16 and pairs of it");

inline __half __float2half_rn(float x) { return __half{static_cast<_Float16>(x)}; }
inline float __half2float(__half h) { return static_cast<float>(h.value); }
inline float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }

#endif  // WARP_EMULATION_STAND_IN_CUDA_FP16_H
