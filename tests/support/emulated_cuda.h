// The CUDA submissions built for the warp emulator
// (cmake/HarnessEmulatedSubmissions.cmake), judged by the harness on the
// CPU: each challenge's test names the cases it can afford.
#pragma once

#include <string>
#include <vector>

#include "harness/runner/run_plan.h"

namespace harness::testing {

// The quick cases of correctness, edge and stability (perf would time the
// emulator).
RunSelection quick_untimed_selection();

// Runs every emulated CUDA submission of `challenge` (mutants included) on
// `selection`'s cases and checks each verdict as selftest would: a mutant
// gets its declared verdict on at least one case of its declared suite
// (every case when it says so), every other entry passes every case. The
// challenge must have an emulated cuda-fast. `also`: cases run beside the
// selection's.
void expect_emulated_cuda_verdicts(const std::string& challenge, RunSelection selection,
                                   const std::vector<std::string>& also = {});

}  // namespace harness::testing
