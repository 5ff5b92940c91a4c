#include "harness_abi.h"
#define PROBE_ABI_VERSION 1
extern "C" {
int32_t probe_abi_version(void);
const char* probe_last_error(void);
/* factor is a double here, a float32 in the declaration */
harness_status probe_scale(const float* x, int64_t n, double factor, float* y, void* stream);
}
