// Seeded random numbers that are the same on every platform and compiler:
// std::normal_distribution and friends are implementation-defined, so a seed
// printed on one machine would not reproduce a case on another. Everything
// the harness generates goes through these generators instead.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace harness {

// Mixes a 64-bit value; used to derive independent seeds.
uint64_t splitmix64(uint64_t x);

// Seed of one case of a run: the same run seed and case id always give the
// same inputs, whatever else the run contains (so `--case ID --seed N`
// reproduces a case of a full run).
uint64_t derive_seed(uint64_t run_seed, std::string_view label);
uint64_t derive_seed(uint64_t seed, uint64_t index);

// The ziggurat's 256 layers of equal area under exp(-x^2/2) (rng.cpp).
struct ZigguratLayers {
  double x[257];
  double f[257];
};

// xoshiro256** with normals by the ziggurat method (Marsaglia and Tsang,
// 256 layers): one draw, a multiply and a compare for all but about 1% of
// them, where the polar method needs a log and a square root per pair; the
// largest cases' input generation is dominated by it, so that common path
// is inline (half the time of a call), the rest in rng.cpp.
class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  double uniform(double lo, double hi);
  // Uniform integer in [0, n), n > 0.
  uint64_t below(uint64_t n);
  // One of `values`, each as likely.
  template <typename T, size_t N>
  const T& pick(const T (&values)[N]) {
    return values[below(N)];
  }
  double normal() {
    const uint64_t bits = next_u64();
    const auto layer = static_cast<size_t>(bits & 0xFF);
    // Uniform in [-1, 1) from the 52 bits above the layer's 8 (and 4 unused).
    const double u = static_cast<double>(bits >> 12) * 0x1.0p-51 - 1.0;
    const double x = u * layers_->x[layer];
    if (std::fabs(x) < layers_->x[layer + 1]) return x;
    return normal_outside_rectangles(layer, u, x);
  }
  double normal(double mean, double stddev);

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  // The draw (layer, u, x) fell outside its layer's rectangle: the base
  // layer's tail, or the wedge test, and new draws until one is accepted.
  double normal_outside_rectangles(size_t layer, double u, double x);
  double normal_tail(bool negative);
  uint64_t state_[4];
  const ZigguratLayers* layers_;
};

}  // namespace harness
