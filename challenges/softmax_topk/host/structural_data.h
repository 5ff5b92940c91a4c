// Structural adversarial rows for softmax_topk: where the winners sit and
// how the row is ordered are what break blocked and warp-level kernels, so
// each kind fixes the structure and draws the rest from the case's seed.
#pragma once

#include "harness/core/rng.h"
#include "topk_case.h"

namespace softmax_topk {

// Whether `data` is one of the structural kinds below.
bool is_structural(Data data);

// Fills one row of a structural kind (see Data in topk_case.h).
void fill_structural_row(const TopkCase& c, harness::Rng& rng, float* row);

}  // namespace softmax_topk
