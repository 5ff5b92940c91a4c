#include "saxpy_probe/saxpy_reference.h"

namespace reference {

void saxpy(const float* x, const float* y, int64_t n, double a, double* z) {
  for (int64_t i = 0; i < n; ++i) z[i] = a * static_cast<double>(x[i]) + static_cast<double>(y[i]);
}

}  // namespace reference
