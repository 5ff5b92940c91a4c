// NumPy .npy files: the tensor format of the process protocol
// (docs/PROCESS_PROTOCOL.md). Versions 1.0 to 3.0, C order,
// little-endian float32, float64, int32, int64 and uint8; anything else is an
// UntrustedInputError (the files come from submissions) that says what was
// found and what is accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/core/dtype.h"
#include "harness/core/tensor.h"

namespace harness {

struct NpyArray {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;  // C order
};

// Writes `data` (elements of `dtype`, C order) as a version 1.0 .npy file.
void write_npy(const std::string& path, DType dtype, const std::vector<int64_t>& shape, const void* data);
// Refuses, before reading, anything but a regular file of at most
// max_file_bytes.
NpyArray read_npy(const std::string& path, size_t max_file_bytes = SIZE_MAX);
struct NpyHeader {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  size_t data_start = 0;  // offset of the data in the file
  size_t data_bytes = 0;
};
// As read_npy, but the data goes straight to where `destination` says once
// it has seen the header (it may throw to refuse the dtype or shape): no
// copy of hundreds of megabytes in between. A file that ends early is an
// UntrustedInputError, with the destination partly written.
NpyHeader read_npy_into(const std::string& path, size_t max_file_bytes,
                        const std::function<void*(const NpyHeader&)>& destination);
// The largest .npy file that can hold a tensor of this dtype and shape.
size_t npy_max_file_bytes(DType dtype, const std::vector<int64_t>& shape);
// The same from bytes in memory; `origin` names them in messages.
NpyArray parse_npy(const std::string& bytes, const std::string& origin);

std::string npy_descr(DType dtype);  // "<f4", ...

}  // namespace harness
