// Warp-level float32 products on tensor cores by 3xTF32: each operand x is
// split as hi = tf32(x) (rounded to nearest, round_to_tf32_bits_fast) and
// lo = x - hi (exact), and a * b is taken as a_lo b_hi + a_hi b_lo +
// a_hi b_hi, each term an mma.m16n8k8 accumulating in float32. hi has no
// bits below TF32's; lo goes in whole, and the tensor core reads it to TF32
// (its top 19 bits), within 2^-10 |lo| <= 2^-21 |x|. With a_lo b_lo dropped
// (at most 2^-22 |a b|), each product is within 5 * 2^-22 of |a b|.
#ifndef ATTENTION_CUDA_MMA_TF32_CUH
#define ATTENTION_CUDA_MMA_TF32_CUH

#include <cstdint>

#include "mma_tf32_layout.h"

namespace attention::cuda::mma {

struct Split {
  uint32_t hi;
  uint32_t lo;
};

// hi rounded to nearest, lo = x - hi exactly (hi is x to 11 significant
// bits), left for the tensor core to read to TF32: three instructions a
// value where rounding lo too took about fifteen, in the loops' hottest
// part (every B fragment is split as it is loaded).
__device__ __forceinline__ Split split(float x) {
  const uint32_t hi = round_to_tf32_bits_fast(x, __float_as_uint(x));
  return Split{hi, __float_as_uint(x - __uint_as_float(hi))};
}

// d += a * b for one TF32 m16n8k8 (A row-major, B "col": k by n).
// Compute capability 8.0 or later; the launcher never runs these kernels on
// an older device, whose code traps.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(WARP_EMULATION)  // built for the host's warp emulator (tests/support/warp_emulation)
  warp_emulation::mma_m16n8k8_tf32(d, a, b);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// An A fragment split once, used against several B fragments.
struct FragA {
  uint32_t hi[4];
  uint32_t lo[4];
};
struct FragB {
  uint32_t hi[2];
  uint32_t lo[2];
};

__device__ __forceinline__ FragA split_a(const float (&x)[4]) {
  FragA f;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const Split s = split(x[r]);
    f.hi[r] = s.hi;
    f.lo[r] = s.lo;
  }
  return f;
}

__device__ __forceinline__ FragB split_b(float x0, float x1) {
  const Split s0 = split(x0), s1 = split(x1);
  return FragB{{s0.hi, s1.hi}, {s0.lo, s1.lo}};
}

// d += a * b to nearly float32 accuracy: the small terms first.
__device__ __forceinline__ void mma_3xtf32(float (&d)[4], const FragA& a, const FragB& b) {
  mma_tf32(d, a.lo, b.hi);
  mma_tf32(d, a.hi, b.lo);
  mma_tf32(d, a.hi, b.hi);
}

// The A fragment of rows [0, 16) and columns [k0, k0 + 8) of a row-major
// tile in shared memory (`tile` at its first row, `stride` floats a row).
__device__ __forceinline__ void load_a(const float* tile, int stride, int k0, int lane, float (&x)[4]) {
#pragma unroll
  for (int r = 0; r < 4; ++r) x[r] = tile[a_row(lane, r) * stride + k0 + a_col(lane, r)];
}

// The B fragment of B = M^T, M a row-major [n, k] tile (keys by dim: B's
// column j is M's row n0 + j), rows k0..k0+7 of B.
__device__ __forceinline__ FragB load_b_transposed(const float* m, int stride, int n0, int k0, int lane) {
  const float* row = m + (n0 + b_col(lane)) * stride + k0;
  return split_b(row[b_row(lane, 0)], row[b_row(lane, 1)]);
}

// The B fragment of a row-major [k, n] tile M (keys by dim): rows k0..k0+7,
// columns n0..n0+7.
__device__ __forceinline__ FragB load_b(const float* m, int stride, int k0, int n0, int lane) {
  const float* col = m + k0 * stride + n0 + b_col(lane);
  return split_b(col[b_row(lane, 0) * stride], col[b_row(lane, 1) * stride]);
}

// The C tile c (16 x 8) as the A operand of a product over its 8 columns:
// every value comes from the lane of the same group that holds it (two
// shuffles a register, one of each candidate, the right one kept).
__device__ __forceinline__ void c_as_a(const float (&c)[4], int lane, float (&a)[4]) {
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int source = c_source_lane(lane, r);
    const float even = __shfl_sync(0xffffffffu, c[2 * (r % 2)], source);
    const float odd = __shfl_sync(0xffffffffu, c[2 * (r % 2) + 1], source);
    a[r] = c_source_register(lane, r) % 2 ? odd : even;
  }
}

// Row g + 8 h of a warp's C tiles [16 x 8 TILES] (g = lane / 4, h 0 or
// 1) into out_row, columns below dim, each value as f makes it.
template <int TILES, class F>
__device__ __forceinline__ void store_c_row(const float (&c)[TILES][4], int h, int lane, int dim, float* out_row,
                                            F f) {
#pragma unroll
  for (int n = 0; n < TILES; ++n) {
    const int col = 8 * n + c_col(lane, 0);
    if (col < dim) out_row[col] = f(c[n][2 * h]);
    if (col + 1 < dim) out_row[col + 1] = f(c[n][2 * h + 1]);
  }
}

}  // namespace attention::cuda::mma

#endif  // ATTENTION_CUDA_MMA_TF32_CUH
