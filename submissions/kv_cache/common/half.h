// IEEE binary16 for the kv_cache submissions of this repository that keep
// K and V in half precision (cpu-fp16, and an exploit that does so unsaid).
#ifndef KV_CACHE_HALF_H
#define KV_CACHE_HALF_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kv_half {

// Round to nearest even; overflow to infinity; half subnormals kept.
inline uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) return sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and above round to infinity
  if (magnitude < 0x38800000u) {                        // below 2^-14: a multiple of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(std::fabs(f) * 16777216.0f));
  }
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

inline float from_half_slow(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  uint32_t bits =
      sign | (exponent == 31 ? (0xffu << 23) | (mantissa << 13) : ((exponent + 112u) << 23) | (mantissa << 13));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Every half's float value, indexed by its bits.
inline const std::vector<float>& table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = from_half_slow(static_cast<uint16_t>(h));
    return t;
  }();
  return table;
}

}  // namespace kv_half

#endif  // KV_CACHE_HALF_H
