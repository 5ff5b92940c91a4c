#include "harness/core/rng.h"

#include <cmath>

namespace harness {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

uint64_t derive_seed(uint64_t run_seed, std::string_view label) {
  // FNV-1a of the label, then mixed with the run seed.
  uint64_t h = 0xCBF29CE484222325ULL;
  for (char c : label) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ULL;
  }
  return splitmix64(run_seed ^ splitmix64(h));
}

uint64_t derive_seed(uint64_t seed, uint64_t index) {
  return splitmix64(seed ^ splitmix64(index + 0x632BE59BD9B4E019ULL));
}

Rng::Rng(uint64_t seed) {
  uint64_t s = seed;
  for (auto& word : state_) {
    s = splitmix64(s);
    word = s;
  }
}

uint64_t Rng::next_u64() {
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
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

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

uint64_t Rng::below(uint64_t n) {
  // Rejection sampling keeps the distribution exactly uniform.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % n;
}

namespace {

// The ziggurat's 256 layers of equal area under exp(-x^2/2): layer i spans
// [0, x[i]) and its top is at f[i] = exp(-x[i]^2/2); x[0] is the base layer's
// width were its tail beyond x[1] = R a rectangle of the same area. R and the
// area V are the published constants for 256 layers; the rest follows from
// them, computed once with the same libm calls on every machine.
struct Ziggurat {
  static constexpr double R = 3.6541528853610088;
  static constexpr double V = 0.00492867323399;
  double x[257];
  double f[257];
  Ziggurat() {
    const auto density = [](double t) { return std::exp(-0.5 * t * t); };
    x[0] = V / density(R);
    x[1] = R;
    for (int i = 1; i < 255; ++i) x[i + 1] = std::sqrt(-2.0 * std::log(V / x[i] + density(x[i])));
    x[256] = 0.0;
    for (int i = 0; i < 257; ++i) f[i] = density(x[i]);
  }
};

const Ziggurat& ziggurat() {
  static const Ziggurat table;
  return table;
}

}  // namespace

double Rng::normal() {
  const Ziggurat& z = ziggurat();
  for (;;) {
    const uint64_t bits = next_u64();
    const auto layer = static_cast<size_t>(bits & 0xFF);
    // Uniform in [-1, 1) from the 52 bits above the layer's 8 (and 4 unused).
    const double u = static_cast<double>(bits >> 12) * 0x1.0p-51 - 1.0;
    const double x = u * z.x[layer];
    if (std::fabs(x) < z.x[layer + 1]) return x;
    if (layer == 0) return normal_tail(u < 0.0);
    // The wedge between the layer's rectangle and the curve.
    if (z.f[layer + 1] + (z.f[layer] - z.f[layer + 1]) * uniform() < std::exp(-0.5 * x * x)) return x;
  }
}

// Beyond R, by Marsaglia's exponential rejection.
double Rng::normal_tail(bool negative) {
  double x, y;
  do {
    x = std::log(1.0 - uniform()) / Ziggurat::R;
    y = std::log(1.0 - uniform());
  } while (-2.0 * y < x * x);
  return negative ? x - Ziggurat::R : Ziggurat::R - x;
}

double Rng::normal(double mean, double stddev) { return mean + stddev * normal(); }

}  // namespace harness
