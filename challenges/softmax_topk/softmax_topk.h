/* C ABI of the softmax_topk challenge (see README.md beside this file).
 *
 * A submission exports the three functions below. The harness calls
 * softmax_topk_abi_version() once after loading the library and refuses a
 * library built against another version.
 */
#ifndef SOFTMAX_TOPK_H
#define SOFTMAX_TOPK_H

#include "harness_abi.h"

#define SOFTMAX_TOPK_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Returns SOFTMAX_TOPK_ABI_VERSION as seen when the submission was compiled. */
HARNESS_EXPORT int32_t softmax_topk_abi_version(void);

/* For every row r in [0, rows):
 *   p = softmax(logits[r, :])                      computed over all `vocab` columns
 *   indices[r, 0..k) = the k columns with the largest p, distinct, in [0, vocab)
 *   probs[r, j]      = p[indices[r, j]],           non-increasing in j
 * Ties at the k-th place may be broken either way.
 *
 * logits  [rows, vocab] float32, row-major; read-only (the harness checks)
 * probs   [rows, k]     float32, row-major; every element must be written
 * indices [rows, k]     int32,   row-major; every element must be written
 * 1 <= k <= vocab, rows >= 1.
 *
 * A cpu submission gets host pointers and must finish its work before it
 * returns. A cuda submission gets device pointers; `stream` is the
 * cudaStream_t to launch on (NULL is the legacy default stream) and the work
 * may still be running when the call returns: the harness synchronises the
 * device and its timing covers all work launched, on any stream.
 *
 * Returns HARNESS_STATUS_UNSUPPORTED for a (rows, vocab, k) it does not
 * handle, HARNESS_STATUS_OK on success. */
HARNESS_EXPORT harness_status softmax_topk_run(const float* logits, int64_t rows, int64_t vocab, int64_t k,
                                               float* probs, int32_t* indices, void* stream);

/* Message for the last status other than OK returned on this thread. */
HARNESS_EXPORT const char* softmax_topk_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SOFTMAX_TOPK_H */
