/* C ABI of the saxpy_probe challenge (README.md beside this file). */
#ifndef SAXPY_PROBE_H
#define SAXPY_PROBE_H

#include "harness_abi.h"

#define SAXPY_PROBE_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

HARNESS_EXPORT int32_t saxpy_probe_abi_version(void);
/* z[i] = a * x[i] + y[i]; x, y read-only; every z[i] written. */
HARNESS_EXPORT harness_status saxpy_probe_run(const float* x, const float* y, int64_t n, float a, float* z,
                                              void* stream);
HARNESS_EXPORT const char* saxpy_probe_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SAXPY_PROBE_H */
