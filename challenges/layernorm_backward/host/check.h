// The layernorm_backward checks: y after the forward; dx, dgamma and dbeta
// after the backward; each against float64 computed from the pristine
// float32 inputs, with the per-tensor tolerances of challenge.json.
#pragma once

#include <map>
#include <string>

#include "harness/challenge_api/stateless_driver.h"
#include "harness/core/error_metrics.h"
#include "ln_case.h"

namespace layernorm {

using Tolerances = std::map<std::string, harness::Tolerance>;  // "y", "dx", "dgamma", "dbeta"

harness::CheckReport check_forward(const LnCase& c, const float* x, const float* gamma, const float* beta,
                                   const float* y, const Tolerances& tolerances);
harness::CheckReport check_backward(const LnCase& c, const float* dy, const float* x, const float* gamma,
                                    const float* dx, const float* dgamma, const float* dbeta,
                                    const Tolerances& tolerances);

// dx of one row (c.rows == 1) alone, as check_backward judges it: a row's
// dgamma and dbeta are only its share of sums over every row, so the row's
// own are taken from the reference.
harness::CheckReport check_dx_row(const LnCase& c, const float* dy, const float* x, const float* gamma, const float* dx,
                                  const Tolerances& tolerances);

}  // namespace layernorm
