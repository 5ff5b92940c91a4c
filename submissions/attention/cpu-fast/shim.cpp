// ABI shim of the project's fast CPU kernels (kernels/attention/cpu).
#include "abi_support.h"
#include "attention/cpu/attention_cpu.h"

namespace {

attention::cpu::Shape shape_of(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv, int64_t dim,
                               float scale, int32_t causal) {
  return attention::cpu::Shape{batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal != 0};
}

harness_status forward(const float* q, const float* k, const float* v, int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t n_q, int64_t n_kv, int64_t dim, float scale, int32_t causal, float* o, float* lse,
                       void* /*stream*/) {
  attention::cpu::forward(q, k, v, shape_of(batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal), o, lse);
  return HARNESS_STATUS_OK;
}

harness_status backward(const float* q, const float* k, const float* v, const float* o, const float* lse,
                        const float* dout, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv,
                        int64_t dim, float scale, int32_t causal, float* dq, float* dk, float* dv, void* /*stream*/) {
  attention::cpu::backward(q, k, v, o, lse, dout, shape_of(batch, heads_q, heads_kv, n_q, n_kv, dim, scale, causal), dq,
                           dk, dv);
  return HARNESS_STATUS_OK;
}

}  // namespace

ATTENTION_EXPORT_ABI(forward, backward)
