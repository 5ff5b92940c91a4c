#include "harness/core/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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

std::string format_index(size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    const auto extent = static_cast<size_t>(std::max<int64_t>(shape[d], 1));
    index[d] = static_cast<int64_t>(flat % extent);
    flat /= extent;
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

HostTensor::HostTensor(TensorSpec spec) : spec_(std::move(spec)), bytes_(spec_.bytes()) {}

}  // namespace harness
