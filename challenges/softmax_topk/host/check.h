// The softmax_topk checker: is the answer a valid top-k of every row, in
// order, with probabilities that match float64 within tolerance? Ties at the
// k-th place may be broken either way, so the check never compares indices
// with one particular answer.
#pragma once

#include <cstdint>
#include <string>

#include "harness/challenge_api/stateless_driver.h"
#include "topk_case.h"

namespace softmax_topk {

// The bound on the probabilities, and the name of the challenge.json
// tolerance it is, which names the metric `<name>_tolerance_used`.
struct Tolerance {
  double rtol = 1e-4;
  double atol = 1.1754944e-38;
  std::string name = "probs";
};

// logits [rows, vocab] as given to the submission (pristine copy);
// probs and indices [rows, k] as returned.
harness::CheckReport check_answer(const TopkCase& c, const float* logits, const float* probs, const int32_t* indices,
                                  const Tolerance& tolerance);

}  // namespace softmax_topk
