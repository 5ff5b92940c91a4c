// Seeded random numbers that are the same on every platform and compiler:
// std::normal_distribution and friends are implementation-defined, so a seed
// printed on one machine would not reproduce a case on another. Everything
// the harness generates goes through these generators instead.
#pragma once

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

// xoshiro256** with normals by the ziggurat method (Marsaglia and Tsang,
// 256 layers): one draw, a multiply and a compare for all but about 1% of
// them, where the polar method needs a log and a square root per pair; the
// largest cases' input generation is dominated by it.
class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  double uniform(double lo, double hi);
  // Uniform integer in [0, n), n > 0.
  uint64_t below(uint64_t n);
  double normal();
  double normal(double mean, double stddev);

 private:
  double normal_tail(bool negative);
  uint64_t state_[4];
};

}  // namespace harness
