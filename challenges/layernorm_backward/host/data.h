// Input generation for layernorm_backward.
#pragma once

#include <cstdint>

#include "ln_case.h"

namespace layernorm {

// Fills one input set: x, dy [rows, dim]; gamma, beta [dim]. Rows draw from
// their own seeds (derived from `seed`), so generation runs in parallel and
// gives the same values on any number of threads.
void generate_inputs(const LnCase& c, uint64_t seed, float* x, float* gamma, float* beta, float* dy);

}  // namespace layernorm
