#include "harness/core/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"

namespace harness {

size_t TensorSpec::elements() const {
  size_t n = 1;
  for (int64_t extent : shape) {
    HARNESS_CHECK(extent >= 0, "tensor '{}' has a negative extent {}", name, extent);
    n *= static_cast<size_t>(extent);
  }
  return n;
}

std::string TensorSpec::describe() const {
  return fmt::format("{} {}[{}]", name, dtype_name(dtype), fmt::join(shape, ", "));
}

HostTensor::HostTensor(TensorSpec spec) : spec_(std::move(spec)), bytes_(spec_.bytes()) {}

}  // namespace harness
