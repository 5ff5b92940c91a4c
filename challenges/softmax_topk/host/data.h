// Input generation for softmax_topk.
#pragma once

#include <cstdint>
#include <vector>

#include "topk_case.h"

namespace softmax_topk {

// Fills logits [rows, vocab] for one input set. Row r draws from its own
// seed (derived from `seed` and r), so generation can run in parallel and
// gives the same logits on any number of threads.
void generate_logits(const TopkCase& c, uint64_t seed, float* logits);

// Refreshes logits between rounds of timed calls: in every row the largest
// logit trades places with another, drawn from `seed`. The row's values
// (so its probabilities) stay as they were, its top index moves: an answer
// remembered from before is wrong in every row of two or more columns.
// With `changed`, the flat indices written (harness::SwapRecord).
void move_each_row_maximum(const TopkCase& c, uint64_t seed, float* logits, std::vector<int64_t>* changed = nullptr);

}  // namespace softmax_topk
