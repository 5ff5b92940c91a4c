// A tensor whose elements live in a SharedBuffer, so a worker process can
// read and write them in place.
#pragma once

#include <cstdint>
#include <memory>

#include "harness/core/tensor.h"
#include "harness/memory/shared_buffer.h"

namespace harness {

class SharedTensor {
 public:
  SharedTensor(uint64_t id, TensorSpec spec);

  const TensorSpec& spec() const { return spec_; }
  size_t elements() const { return spec_.elements(); }
  size_t bytes() const { return spec_.bytes(); }
  SharedBuffer& buffer() { return *buffer_; }
  const SharedBuffer& buffer() const { return *buffer_; }
  void* raw() { return buffer_->data(); }
  const void* raw() const { return buffer_->data(); }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(buffer_->data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(buffer_->data());
  }
  TensorView view() const { return TensorView{&spec_, buffer_->data()}; }

  void copy_from(const HostTensor& source);

 private:
  TensorSpec spec_;
  std::unique_ptr<SharedBuffer> buffer_;
};

}  // namespace harness
