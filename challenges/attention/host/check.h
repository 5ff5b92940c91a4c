// The attention checks: o and lse after a forward; dq, dk and dv after a
// backward; each against float64 computed from the pristine float32
// inputs, with the per-tensor tolerances of challenge.json (README.md,
// "Tolerances, and why").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attn_case.h"
#include "harness/challenge_api/stateless_driver.h"
#include "harness/core/error_metrics.h"

namespace attention {

using Tolerances = std::map<std::string, harness::Tolerance>;  // "o", "lse", "dq", "dk", "dv"

struct ForwardTensors {
  const float* q;
  const float* k;
  const float* v;
  const float* o;    // the submission's
  const float* lse;  // the submission's
};

struct BackwardTensors {
  const float* q;
  const float* k;
  const float* v;
  const float* o;    // the harness's forward, as the submission was given it
  const float* lse;  // likewise
  const float* dout;
  const float* dq;  // the submission's
  const float* dk;
  const float* dv;
};

harness::CheckReport check_forward(const AttnCase& c, const ForwardTensors& t, const Tolerances& tolerances);
harness::CheckReport check_backward(const AttnCase& c, const BackwardTensors& t, const Tolerances& tolerances);

// The float64 work of a full check grows with the shape; past about
// kCheckedFlops (a GPU's perf shapes) the full checks cover a sample of the
// kv heads (with every query head of their groups), drawn from `seed`, at
// least 2: a kernel that gets some heads wrong is still caught with the
// odds of the sample, every round's spot checks aside. All heads below it.
inline constexpr double kCheckedFlops = 2e10;
std::vector<int64_t> checked_kv_heads(const AttnCase& c, uint64_t seed);
// The checks of only those kv heads (sorted, over the batch).
harness::CheckReport check_forward(const AttnCase& c, const ForwardTensors& t, const Tolerances& tolerances,
                                   const std::vector<int64_t>& kv_heads);
harness::CheckReport check_backward(const AttnCase& c, const BackwardTensors& t, const Tolerances& tolerances,
                                    const std::vector<int64_t>& kv_heads);

// One row alone, between timed rounds: the forward's o and lse of query
// row `row` (of c.q_rows()); the backward's dq of that row and dk, dv of kv
// row `row % c.kv_rows()`, the latter from the given o and lse.
harness::CheckReport check_forward_row(const AttnCase& c, const ForwardTensors& t, int64_t row,
                                       const Tolerances& tolerances);
harness::CheckReport check_backward_row(const AttnCase& c, const BackwardTensors& t, int64_t row,
                                        const Tolerances& tolerances);

}  // namespace attention
