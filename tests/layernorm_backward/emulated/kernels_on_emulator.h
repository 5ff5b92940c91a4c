// cuda-fast's layernorm (kernels/layernorm_backward/cuda) run on the host by
// the warp emulator (tests/support/warp_emulation): the plans for a device
// of `sm_count` multiprocessors, then the launches, on host memory. "" or
// the launch's error and the emulator's account of it; the plan taken is
// described in *plan.
#pragma once

#include <cstdint>
#include <string>

#include "layernorm_backward/row_stats.h"

namespace layernorm::emulated {

std::string forward_on_emulator(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim,
                                float eps, float* y, RowStats* saved, std::string* plan);
std::string backward_on_emulator(const float* dy, const float* x, const float* gamma, const RowStats* saved,
                                 int64_t rows, int64_t dim, int sm_count, float* dx, float* dgamma, float* dbeta,
                                 std::string* plan);

}  // namespace layernorm::emulated
