#include "saxpy_probe.h"

extern "C" {

int32_t saxpy_probe_abi_version(void) { return SAXPY_PROBE_ABI_VERSION; }

harness_status saxpy_probe_run(const float* x, const float* y, int64_t n, float a, float* z, void*) {
  for (int64_t i = 0; i < n; ++i) z[i] = a * x[i] + y[i];
  return HARNESS_STATUS_OK;
}

const char* saxpy_probe_last_error(void) { return "no error"; }
}
