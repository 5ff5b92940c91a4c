/* C ABI of the attention challenge (see README.md beside this file).
 *
 * Scaled dot-product attention, forward and backward, over float32 tensors
 * in row-major [batch, heads, length, dim] layout, with grouped query heads
 * and an optional causal mask aligned at the bottom right.
 */
#ifndef ATTENTION_H
#define ATTENTION_H

#include "harness_abi.h"

#define ATTENTION_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Returns ATTENTION_ABI_VERSION as seen when the submission was compiled. */
HARNESS_EXPORT int32_t attention_abi_version(void);

/* For batch b, query head h (kv head g = h / (heads_q / heads_kv)), query i:
 *   s[j]   = scale * sum_d q[b, h, i, d] * k[b, g, j, d]   for the keys j it sees
 *   sees j : every j when causal == 0; j <= i + (n_kv - n_q) when causal != 0
 *   lse[b, h, i] = log(sum_j exp(s[j]))                    over the keys it sees
 *   o[b, h, i, :] = sum_j exp(s[j] - lse[b, h, i]) * v[b, g, j, :]
 * A query that sees no key (causal, i < n_q - n_kv) has o = 0 and lse = -inf.
 *
 * q   [batch, heads_q,  n_q,  dim] float32, read-only
 * k,v [batch, heads_kv, n_kv, dim] float32, read-only
 * o   [batch, heads_q,  n_q,  dim] float32, every element written
 * lse [batch, heads_q,  n_q]       float32, every element written
 * heads_q is a multiple of heads_kv. Pointers are host memory (cpu) or
 * device memory (cuda); `stream` is the cudaStream_t to launch on (NULL the
 * legacy default), unused on the CPU. No memory is provided for scratch: what
 * a call allocates is measured (README.md, Memory). */
HARNESS_EXPORT harness_status attention_forward(const float* q, const float* k, const float* v, int64_t batch,
                                                int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv,
                                                int64_t dim, float scale, int32_t causal, float* o, float* lse,
                                                void* stream);

/* Given dout = dL/do for the forward of the same q, k, v, scale and causal,
 * and that forward's o and lse (the harness's own, correct to float32):
 *   dq [batch, heads_q,  n_q,  dim] float32  dL/dq, every element written
 *   dk [batch, heads_kv, n_kv, dim] float32  dL/dk, summed over the query heads of each kv head
 *   dv [batch, heads_kv, n_kv, dim] float32  dL/dv, likewise
 * q, k, v, o, lse and dout are read-only. */
HARNESS_EXPORT harness_status attention_backward(const float* q, const float* k, const float* v, const float* o,
                                                 const float* lse, const float* dout, int64_t batch, int64_t heads_q,
                                                 int64_t heads_kv, int64_t n_q, int64_t n_kv, int64_t dim, float scale,
                                                 int32_t causal, float* dq, float* dk, float* dv, void* stream);

/* Message for the last status other than OK returned on this thread. */
HARNESS_EXPORT const char* attention_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTENTION_H */
