// Float64 ground truth for saxpy_probe.
#pragma once

#include <cstdint>

namespace reference {

// z[i] = a * x[i] + y[i], in float64.
void saxpy(const float* x, const float* y, int64_t n, double a, double* z);

}  // namespace reference
