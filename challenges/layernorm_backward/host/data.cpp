#include "data.h"

#include <utility>

#include "harness/challenge_api/input_refresh.h"
#include "harness/core/parallel.h"
#include "harness/core/rng.h"

namespace layernorm {

namespace {

void fill_row(const LnCase& c, harness::Rng& rng, float* x, float* dy) {
  const auto dim = static_cast<size_t>(c.dim);
  const auto row_value = static_cast<float>(rng.normal(0.0, 10.0));
  for (size_t j = 0; j < dim; ++j) {
    double v = 0;
    switch (c.data) {
      case Data::normal: v = rng.normal(); break;
      case Data::zero: v = 0; break;
      case Data::constant: v = row_value; break;
      case Data::tiny: v = rng.normal(0.0, 1e-4); break;
      case Data::offset: v = rng.normal(c.amount, 1.0); break;
      // Squares near 1e34: a float32 sum of squares over a row holds them
      // (a sound float32 two-pass variance must not overflow), a float32
      // square of the raw sum does not.
      case Data::huge: v = rng.normal() * 1e17; break;
      case Data::scaled: v = rng.normal() * 1000.0; break;
    }
    x[j] = static_cast<float>(v);
    const double d = rng.normal();  // drawn without dy too: x stays as it is with it
    if (dy != nullptr) dy[j] = static_cast<float>(d);
  }
}

}  // namespace

void generate_inputs(const LnCase& c, uint64_t seed, float* x, float* gamma, float* beta, float* dy) {
  harness::Rng parameters(harness::derive_seed(seed, "gamma-beta"));
  for (int64_t j = 0; j < c.dim; ++j) {
    gamma[j] = static_cast<float>(parameters.normal(1.0, 0.1));
    beta[j] = static_cast<float>(parameters.normal(0.0, 0.1));
  }
  harness::parallel_for(static_cast<size_t>(c.rows), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      harness::Rng rng(harness::derive_seed(seed, r));
      fill_row(c, rng, x + r * static_cast<size_t>(c.dim),
               dy == nullptr ? nullptr : dy + r * static_cast<size_t>(c.dim));
    }
  });
}

void swap_two_in_each_row(const LnCase& c, uint64_t seed, float* rows, std::vector<int64_t>* changed) {
  harness::swap_two_in_each_row(rows, c.rows, c.dim, seed, changed);
}

}  // namespace layernorm
