// Input generation for attention.
#pragma once

#include <cstdint>

#include "attn_case.h"

namespace attention {

// Fills q [q_rows, dim], k and v [kv_rows, dim] and, where not null, dout
// [q_rows, dim], as c.data says. Rows draw from their own seeds (derived from
// `seed`), so generation runs in parallel and gives the same values on any
// number of threads.
void generate_inputs(const AttnCase& c, uint64_t seed, float* q, float* k, float* v, float* dout);

// The forward's o and lse in float64, rounded to float32: what a backward
// case hands the submission as the forward it differentiates.
void forward_of(const AttnCase& c, const float* q, const float* k, const float* v, float* o, float* lse);

// The backward in float64, rounded to float32 (the in-process answers of
// Challenge::solve).
void backward_of(const AttnCase& c, const float* q, const float* k, const float* v, const float* dout, float* dq,
                 float* dk, float* dv);

}  // namespace attention
