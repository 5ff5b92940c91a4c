// ABI shim of the project's fast CPU kernels (kernels/layernorm_backward/cpu).
#include "abi_support.h"
#include "layernorm_backward/cpu/layernorm_cpu.h"

namespace {

using layernorm::RowStats;

int64_t saved_bytes(int64_t rows, int64_t /*dim*/) { return layernorm::saved_state_bytes(rows); }

harness_status forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps,
                       float* y, void* saved, void* /*stream*/) {
  layernorm::cpu::forward(x, gamma, beta, rows, dim, eps, y, static_cast<RowStats*>(saved));
  return HARNESS_STATUS_OK;
}

harness_status backward(const float* dy, const float* x, const float* gamma, const void* saved, int64_t rows,
                        int64_t dim, float /*eps: rstd is saved*/, float* dx, float* dgamma, float* dbeta,
                        void* /*stream*/) {
  layernorm::cpu::backward(dy, x, gamma, static_cast<const RowStats*>(saved), rows, dim, dx, dgamma, dbeta);
  return HARNESS_STATUS_OK;
}

}  // namespace

LAYERNORM_EXPORT_ABI(saved_bytes, forward, backward)
