// Portable SIMD helpers for the CPU kernels: GCC/Clang vector
// extensions, lowered by the compiler to whatever -march offers (AVX-512,
// AVX2, SSE, NEON), plus a vectorisable float exp.
#ifndef KERNELS_COMMON_VEC_MATH_H
#define KERNELS_COMMON_VEC_MATH_H

#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kernels::common {

constexpr int kLanes = 16;
typedef float vfloat __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t vint __attribute__((vector_size(kLanes * sizeof(int32_t))));

inline vfloat vbroadcast(float x) {
  vfloat v;
  for (int l = 0; l < kLanes; ++l) v[l] = x;
  return v;
}

// Rows are not 64-byte aligned (V is arbitrary), so every load is unaligned.
inline vfloat vload(const float* p) {
  vfloat v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Loads n < kLanes floats; the missing lanes read -inf, which is neutral for
// max, contributes exp(-inf) = 0 to a sum and never passes a `>` test.
inline vfloat vload_partial(const float* p, int n) {
  float tmp[kLanes];
  for (int l = 0; l < kLanes; ++l) tmp[l] = -__builtin_inff();
  std::memcpy(tmp, p, static_cast<size_t>(n) * sizeof(float));
  return vload(tmp);
}

inline vfloat vmax(vfloat a, vfloat b) { return a > b ? a : b; }
inline vfloat vmin(vfloat a, vfloat b) { return a < b ? a : b; }

inline float hmax(vfloat v) {
  float m = v[0];
  for (int l = 1; l < kLanes; ++l) m = v[l] > m ? v[l] : m;
  return m;
}

inline float hsum(vfloat v) {
  // Pairwise, so the lanes' rounding errors do not pile up on one of them.
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) v[l] += v[l + w];
  return v[0];
}

// True when any lane of v is > t. The selection scan calls this once per
// vector, so it must not fall back to a lane-by-lane loop where SIMD exists.
inline bool any_greater(vfloat v, float t) {
#if defined(__AVX512F__)
  return _mm512_cmp_ps_mask(reinterpret_cast<__m512&>(v), _mm512_set1_ps(t), _CMP_GT_OQ) != 0;
#elif defined(__AVX2__)
  const __m256 tt = _mm256_set1_ps(t);
  const __m256* h = reinterpret_cast<const __m256*>(&v);
  return _mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(h[0], tt, _CMP_GT_OQ), _mm256_cmp_ps(h[1], tt, _CMP_GT_OQ))) !=
         0;
#else
  bool any = false;
  for (int l = 0; l < kLanes; ++l) any |= v[l] > t;
  return any;
#endif
}

// exp(x) for every lane, within 2 ulp of the correctly rounded result where
// that result is a normal float. Results below FLT_MIN come out as a
// subnormal or 0 (x = -inf gives exactly 0); never NaN or inf for x <= 88.
//
// exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n*ln2 in [-ln2/2, ln2/2].
// ln2 is split in two (Cody-Waite) so that n*ln2_hi is exact; exp(r) is
// 1 + r + r^2 q(r) with q of degree 4, fitted by least squares to the relative
// error on Chebyshev nodes (max relative error 3.8e-9 with these float
// coefficients, far below the 6e-8 rounding of the result).
inline vfloat vexp(vfloat x) {
  // Below -88 the result is < FLT_MIN (flushed, see above); clamping keeps
  // n in [-127, 127], where 2^n is a plain exponent field, and turns -inf
  // into a finite value so that no NaN appears.
  x = vmin(vmax(x, vbroadcast(-88.0f)), vbroadcast(88.0f));
  // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer (the
  // default rounding mode) for |t| < 2^22, without a vector rint.
  const vfloat magic = vbroadcast(12582912.0f);
  const vfloat n = (x * vbroadcast(1.44269504f) + magic) - magic;
  vfloat r = x - n * vbroadcast(0.693359375f);  // ln2_hi: 9 significant bits
  r = r - n * vbroadcast(-2.12194440e-4f);      // ln2 - ln2_hi
  vfloat q = vbroadcast(1.375140739e-03f);
  q = q * r + vbroadcast(8.368915878e-03f);
  q = q * r + vbroadcast(4.166953266e-02f);
  q = q * r + vbroadcast(1.666651815e-01f);
  q = q * r + vbroadcast(4.999998808e-01f);
  // 1 + (r + ...): the only rounding at the scale of the result is the last add.
  const vfloat er = vbroadcast(1.0f) + (r + (r * r) * q);
  // n = -127 gives a zero exponent field, i.e. scale = +0: the flush above.
  const vint bits = (__builtin_convertvector(n, vint) + 127) << 23;
  vfloat scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return er * scale;
}

}  // namespace kernels::common

#endif  // KERNELS_COMMON_VEC_MATH_H
