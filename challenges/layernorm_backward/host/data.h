// Input generation for layernorm_backward.
#pragma once

#include <cstdint>
#include <vector>

#include "ln_case.h"

namespace layernorm {

// Fills one input set: x, dy [rows, dim]; gamma, beta [dim]. Rows draw from
// their own seeds (derived from `seed`), so generation runs in parallel and
// gives the same values on any number of threads. dy may be null (a timed
// forward's set): x is the same with it or without.
void generate_inputs(const LnCase& c, uint64_t seed, float* x, float* gamma, float* beta, float* dy);

// Refreshes x or dy [rows, dim] between rounds of timed calls: in every row
// two elements, drawn from `seed`, trade places. A row's statistics stay as
// they were, so the saved state of a forward still fits x; the outputs at
// those two columns (y; dx, and dgamma, dbeta summed over rows) change, so
// an answer remembered from before is wrong in every row of two or more
// distinct values.
// With `changed`, the flat indices written (harness::swap_two_in_each_row).
void swap_two_in_each_row(const LnCase& c, uint64_t seed, float* rows, std::vector<int64_t>* changed = nullptr);

}  // namespace layernorm
