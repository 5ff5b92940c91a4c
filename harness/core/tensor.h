// Tensor descriptions and the host-side tensors that drivers fill with
// generated inputs (the pristine copies every check is computed from).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/dtype.h"

namespace harness {

struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;

  size_t elements() const;
  size_t bytes() const { return elements() * dtype_size(dtype); }
  // e.g. "logits float32[64, 1024]"
  std::string describe() const;
};

// Owns its elements; row-major.
class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(TensorSpec spec);

  const TensorSpec& spec() const { return spec_; }
  size_t elements() const { return spec_.elements(); }
  size_t bytes() const { return bytes_.size(); }
  void* raw() { return bytes_.data(); }
  const void* raw() const { return bytes_.data(); }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes_.data());
  }

 private:
  TensorSpec spec_;
  std::vector<unsigned char> bytes_;
};

// A read-only look at tensor elements owned elsewhere (a shared buffer).
struct TensorView {
  const TensorSpec* spec = nullptr;
  const void* data = nullptr;
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data);
  }
  size_t elements() const { return spec->elements(); }
};

// "[3, 17]" for a flat index into a row-major shape.
std::string format_index(size_t flat, const std::vector<int64_t>& shape);

}  // namespace harness
