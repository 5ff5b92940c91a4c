/* C ABI of the layernorm_backward challenge (see README.md beside this file).
 *
 * Layer normalisation over the last dimension, forward and backward. The
 * forward keeps a saved state for the backward; the submission declares its
 * size, the harness allocates exactly that much (with guard bands around it)
 * and measures it against the minimum of 2 floats per row.
 */
#ifndef LAYERNORM_BACKWARD_H
#define LAYERNORM_BACKWARD_H

#include "harness_abi.h"

#define LAYERNORM_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Returns LAYERNORM_ABI_VERSION as seen when the submission was compiled. */
HARNESS_EXPORT int32_t layernorm_abi_version(void);

/* The number of bytes of saved state layernorm_forward writes for this
 * shape, into *bytes. Called on the host, before any forward. */
HARNESS_EXPORT harness_status layernorm_saved_state_bytes(int64_t rows, int64_t dim, int64_t* bytes);

/* For every row r:
 *   mean_r = sum_j x[r, j] / dim
 *   var_r  = sum_j (x[r, j] - mean_r)^2 / dim          (population variance)
 *   rstd_r = 1 / sqrt(var_r + eps)
 *   y[r, j] = gamma[j] * (x[r, j] - mean_r) * rstd_r + beta[j]
 *
 * x     [rows, dim] float32, read-only
 * gamma [dim]       float32, read-only
 * beta  [dim]       float32, read-only
 * y     [rows, dim] float32, every element written
 * saved             the bytes declared by layernorm_saved_state_bytes, for
 *                   the submission's own use by layernorm_backward
 * Pointers are host memory (cpu) or device memory (cuda); `stream` as in
 * softmax_topk: the cudaStream_t to launch on, NULL the legacy default. */
HARNESS_EXPORT harness_status layernorm_forward(const float* x, const float* gamma, const float* beta, int64_t rows,
                                                int64_t dim, float eps, float* y, void* saved, void* stream);

/* Given dy = dL/dy for the forward of the same x, gamma and eps:
 *   dx     [rows, dim] float32  dL/dx, every element written
 *   dgamma [dim]       float32  sum over rows of dy * xhat, written (not accumulated into)
 *   dbeta  [dim]       float32  sum over rows of dy, written (not accumulated into)
 * saved is what layernorm_forward wrote for this x (read-only); dy, x and
 * gamma are read-only. */
HARNESS_EXPORT harness_status layernorm_backward(const float* dy, const float* x, const float* gamma, const void* saved,
                                                 int64_t rows, int64_t dim, float eps, float* dx, float* dgamma,
                                                 float* dbeta, void* stream);

/* Message for the last status other than OK returned on this thread. */
HARNESS_EXPORT const char* layernorm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* LAYERNORM_BACKWARD_H */
