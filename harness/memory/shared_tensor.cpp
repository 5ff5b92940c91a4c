#include "harness/memory/shared_tensor.h"

#include "harness/core/bulk_bytes.h"
#include "harness/core/error.h"

namespace harness {

SharedTensor::SharedTensor(uint64_t id, TensorSpec spec)
    : spec_(std::move(spec)), buffer_(std::make_unique<SharedBuffer>(id, spec_.bytes())) {}

void SharedTensor::copy_from(const HostTensor& source) {
  HARNESS_CHECK(source.bytes() == bytes(), "copying {} into {}: sizes differ", source.spec().describe(),
                spec_.describe());
  copy_bytes(buffer_->data(), source.raw(), source.bytes());
}

}  // namespace harness
