// ABI shim of the project's fast CPU kernel (kernels/softmax_topk/cpu).
#include "abi_support.h"
#include "softmax_topk/cpu/softmax_topk_cpu.h"

namespace {

harness_status run(const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs, int32_t* indices,
                   void* /*stream*/) {
  softmax_topk::cpu::softmax_topk(logits, rows, vocab, k, probs, indices);
  return HARNESS_STATUS_OK;
}

}  // namespace

SOFTMAX_TOPK_EXPORT_ABI(run)
