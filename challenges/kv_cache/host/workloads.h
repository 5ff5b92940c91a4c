// The scripted workloads of kv_cache (README.md, "Workloads"), each a short
// script over a KvSession.
#pragma once

#include <map>

#include "harness/challenge_api/case_context.h"
#include "harness/core/error_metrics.h"
#include "kv_case.h"

namespace kv {

// format -> the attention tolerance of caches storing in it.
using FormatTolerances = std::map<int32_t, harness::Tolerance>;

// The layered-budget workload's budget, in tokens of every layer at the
// format's minimum: three sequences of 128 and half of a fourth. A cache
// that checks only the layer at hand finds the fourth's first layer fits
// (64 * layers >= 128 tokens of one layer for layers >= 2), the whole not.
constexpr double layered_budget_tokens() { return 3 * 128 + 64; }

void run_workload(harness::CaseContext& ctx, const KvCase& c, const FormatTolerances& tolerances);

}  // namespace kv
