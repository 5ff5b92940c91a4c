// The scripted workloads of kv_cache (README.md, "Workloads"), each a short
// script over a KvSession.
#pragma once

#include <map>

#include "harness/core/error_metrics.h"
#include "harness/runner/case_context.h"
#include "kv_case.h"

namespace kv {

// format -> the attention tolerance of caches storing in it.
using FormatTolerances = std::map<int32_t, harness::Tolerance>;

void run_workload(harness::CaseContext& ctx, const KvCase& c, const FormatTolerances& tolerances);

}  // namespace kv
