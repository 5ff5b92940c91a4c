#include "harness/core/dtype.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "harness/core/bulk_bytes.h"
#include "harness/core/error.h"

namespace harness {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::f16: return 2;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
  }
  HARNESS_FAIL("unknown dtype {}", static_cast<int>(dtype));
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::f16: return "float16";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::u8: return "uint8";
  }
  HARNESS_FAIL("unknown dtype {}", static_cast<int>(dtype));
}

DType dtype_from_name(std::string_view name) {
  for (DType d : {DType::f32, DType::f64, DType::f16, DType::i32, DType::i64, DType::u8}) {
    if (dtype_name(d) == name) return d;
  }
  throw UsageError(fmt::format("unknown dtype '{}'", name));
}

uint64_t poison_bits(DType dtype) {
  switch (dtype) {
    case DType::f32: return 0x7FA5A5A5u;            // signalling NaN, payload A5
    case DType::f64: return 0x7FF4A5A5A5A5A5A5ull;  // signalling NaN, payload A5
    case DType::f16: return 0x7D5Au;                // signalling NaN
    case DType::i32: return 0xA5A5A5A5u;            // -1515870811
    case DType::i64: return 0xA5A5A5A5A5A5A5A5ull;
    case DType::u8: return 0xA5u;
  }
  HARNESS_FAIL("unknown dtype {}", static_cast<int>(dtype));
}

void fill_poison(void* data, size_t count, DType dtype) {
  const size_t size = dtype_size(dtype);
  const uint64_t bits = poison_bits(dtype);
  for_byte_chunks(count * size, size * 1024, [&](size_t begin, size_t end) {
    auto* bytes = static_cast<unsigned char*>(data) + begin;
    const size_t elements = (end - begin) / size;
    if (size == 1) {
      std::memset(bytes, static_cast<int>(bits), elements);
      return;
    }
    // Write one element, then double the filled prefix: memcpy speed for
    // outputs of hundreds of megabytes.
    std::memcpy(bytes, &bits, size);  // little-endian: the low `size` bytes
    size_t filled = 1;
    while (filled < elements) {
      const size_t chunk = std::min(filled, elements - filled);
      std::memcpy(bytes + filled * size, bytes, chunk * size);
      filled += chunk;
    }
  });
}

namespace {
template <typename Word>
Word word_at(const unsigned char* bytes, size_t i) {
  Word w;
  std::memcpy(&w, bytes + i * sizeof(Word), sizeof(Word));  // buffers may be unaligned
  return w;
}

// A count without a branch in its loop, which the compiler vectorises; the
// first index is looked for only where there is one.
template <typename Word>
size_t count_equal(const void* data, size_t count, Word pattern, size_t* first_index) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  size_t found = 0;
  for (size_t i = 0; i < count; ++i) found += word_at<Word>(bytes, i) == pattern;
  size_t first = count;
  for (size_t i = 0; found > 0 && i < count; ++i) {
    if (word_at<Word>(bytes, i) == pattern) {
      first = i;
      break;
    }
  }
  if (first_index) *first_index = first;
  return found;
}
}  // namespace

namespace {
size_t count_poison_serially(const void* data, size_t count, DType dtype, size_t* first_index) {
  const uint64_t bits = poison_bits(dtype);
  switch (dtype_size(dtype)) {
    case 1: return count_equal<uint8_t>(data, count, static_cast<uint8_t>(bits), first_index);
    case 2: return count_equal<uint16_t>(data, count, static_cast<uint16_t>(bits), first_index);
    case 4: return count_equal<uint32_t>(data, count, static_cast<uint32_t>(bits), first_index);
    case 8: return count_equal<uint64_t>(data, count, bits, first_index);
  }
  HARNESS_FAIL("unexpected element size {} of {}", dtype_size(dtype), dtype_name(dtype));
}
}  // namespace

size_t count_poison(const void* data, size_t count, DType dtype, size_t* first_index) {
  const size_t size = dtype_size(dtype);
  std::mutex mutex;
  size_t found = 0;
  size_t first = count;
  for_byte_chunks(count * size, size * 1024, [&](size_t begin, size_t end) {
    size_t chunk_first = 0;
    const size_t chunk_found = count_poison_serially(static_cast<const unsigned char*>(data) + begin,
                                                     (end - begin) / size, dtype, &chunk_first);
    const std::lock_guard<std::mutex> lock(mutex);
    found += chunk_found;
    if (chunk_found > 0) first = std::min(first, begin / size + chunk_first);
  });
  if (first_index) *first_index = first;
  return found;
}

std::string format_element(const void* data, size_t index, DType dtype) {
  const auto* bytes = static_cast<const unsigned char*>(data) + index * dtype_size(dtype);
  switch (dtype) {
    case DType::f32: {
      float v;
      std::memcpy(&v, bytes, 4);
      return fmt::format("{:.9g}", v);
    }
    case DType::f64: {
      double v;
      std::memcpy(&v, bytes, 8);
      return fmt::format("{:.17g}", v);
    }
    case DType::f16: {
      uint16_t v;
      std::memcpy(&v, bytes, 2);
      return fmt::format("f16:0x{:04x}", v);
    }
    case DType::i32: {
      int32_t v;
      std::memcpy(&v, bytes, 4);
      return fmt::format("{}", v);
    }
    case DType::i64: {
      int64_t v;
      std::memcpy(&v, bytes, 8);
      return fmt::format("{}", v);
    }
    case DType::u8: return fmt::format("{}", static_cast<unsigned>(*bytes));
  }
  return "?";
}

}  // namespace harness
