// Input generation for softmax_topk.
#pragma once

#include <cstdint>

#include "topk_case.h"

namespace softmax_topk {

// Fills logits [rows, vocab] for one input set. Row r draws from its own
// seed (derived from `seed` and r), so generation can run in parallel and
// gives the same logits on any number of threads.
void generate_logits(const TopkCase& c, uint64_t seed, float* logits);

}  // namespace softmax_topk
