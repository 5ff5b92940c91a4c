/* Definitions shared by every challenge's C ABI.
 *
 * A submission is a shared library that exports the plain C functions named in
 * its challenge's header (challenges/<name>/<name>.h). The rules below hold for
 * every challenge:
 *   - every function that can fail returns a harness_status;
 *   - after a status other than HARNESS_STATUS_OK, the challenge's
 *     `<challenge>_last_error()` returns a readable message (never NULL);
 *   - no C++ exception may cross the ABI: catch everything and return
 *     HARNESS_STATUS_ERROR with the message;
 *   - HARNESS_STATUS_UNSUPPORTED means "this submission does not handle this
 *     case" (a shape, a K, a mode); it costs completeness, not correctness.
 */
#ifndef HARNESS_ABI_H
#define HARNESS_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t harness_status;

#define HARNESS_STATUS_OK 0
#define HARNESS_STATUS_UNSUPPORTED 1
#define HARNESS_STATUS_INVALID_ARGUMENT 2
#define HARNESS_STATUS_ERROR 3
/* The operation would need more memory than the budget it was given; it
 * changed nothing (kv_cache's append past its budget). */
#define HARNESS_STATUS_OUT_OF_MEMORY 4

#if defined(__GNUC__) || defined(__clang__)
#define HARNESS_EXPORT __attribute__((visibility("default")))
#else
#define HARNESS_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* HARNESS_ABI_H */
