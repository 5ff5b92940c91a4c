// Element types of the tensors that cross the submission ABI, and the
// patterns the harness writes to catch unwritten outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harness {

enum class DType { f32, f64, f16, i32, i64, u8 };

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);
DType dtype_from_name(std::string_view name);  // throws UsageError on unknown names

// Poison written to every output element before a call. Each is a value a
// correct answer never contains (a NaN with a recognisable payload for
// floats, a large negative number for integers), so any element still equal
// to it afterwards was not written.
uint64_t poison_bits(DType dtype);

// Fills `count` elements at `data` with the poison of `dtype`.
void fill_poison(void* data, size_t count, DType dtype);
// Number of elements equal to the poison, and the index of the first one
// (or count when there is none).
size_t count_poison(const void* data, size_t count, DType dtype, size_t* first_index);

// Readable value of element `index` (for messages).
std::string format_element(const void* data, size_t index, DType dtype);

}  // namespace harness
