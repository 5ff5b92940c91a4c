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

// Layer i spans [0, x[i]) and its top is at f[i] = exp(-x[i]^2/2); x[0] is
// the base layer's width were its tail beyond x[1] = R a rectangle of the
// same area. R and the area V are the published constants for 256 layers;
// the rest follows from them, computed once with the same libm calls on
// every machine.
constexpr double kR = 3.6541528853610088;
constexpr double kV = 0.00492867323399;

ZigguratLayers make_layers() {
  ZigguratLayers z{};
  const auto density = [](double t) { return std::exp(-0.5 * t * t); };
  z.x[0] = kV / density(kR);
  z.x[1] = kR;
  for (int i = 1; i < 255; ++i) z.x[i + 1] = std::sqrt(-2.0 * std::log(kV / z.x[i] + density(z.x[i])));
  z.x[256] = 0.0;
  for (int i = 0; i < 257; ++i) z.f[i] = density(z.x[i]);
  return z;
}

const ZigguratLayers& ziggurat() {
  static const ZigguratLayers layers = make_layers();
  return layers;
}

}  // namespace

Rng::Rng(uint64_t seed) : layers_(&ziggurat()) {
  uint64_t s = seed;
  for (auto& word : state_) {
    s = splitmix64(s);
    word = s;
  }
}

double Rng::normal_outside_rectangles(size_t layer, double u, double x) {
  const ZigguratLayers& z = *layers_;
  for (;;) {
    if (layer == 0) return normal_tail(u < 0.0);
    // The wedge between the layer's rectangle and the curve.
    if (z.f[layer + 1] + (z.f[layer] - z.f[layer + 1]) * uniform() < std::exp(-0.5 * x * x)) return x;
    const uint64_t bits = next_u64();
    layer = static_cast<size_t>(bits & 0xFF);
    u = static_cast<double>(bits >> 12) * 0x1.0p-51 - 1.0;
    x = u * z.x[layer];
    if (std::fabs(x) < z.x[layer + 1]) return x;
  }
}

// Beyond R, by Marsaglia's exponential rejection.
double Rng::normal_tail(bool negative) {
  double x, y;
  do {
    x = std::log(1.0 - uniform()) / kR;
    y = std::log(1.0 - uniform());
  } while (-2.0 * y < x * x);
  return negative ? x - kR : kR - x;
}

double Rng::normal(double mean, double stddev) { return mean + stddev * normal(); }

}  // namespace harness
