#include "harness/core/bulk_bytes.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "harness/core/parallel.h"

namespace harness {

void for_byte_chunks(size_t bytes, size_t align, const std::function<void(size_t, size_t)>& body) {
  if (bytes < kBulkBytes || align == 0 || bytes / align < 2) {
    if (bytes > 0) body(0, bytes);
    return;
  }
  // Whole aligned units per chunk; the last unit may be short (a tail).
  const size_t units = (bytes + align - 1) / align;
  parallel_for(units, [&](size_t begin, size_t end) { body(begin * align, std::min(bytes, end * align)); });
}

bool same_bytes(const void* a, const void* b, size_t bytes) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  std::atomic<bool> same{true};
  for_byte_chunks(bytes, 4096, [&](size_t begin, size_t end) {
    if (std::memcmp(x + begin, y + begin, end - begin) != 0) same = false;
  });
  return same;
}

void copy_bytes(void* to, const void* from, size_t bytes) {
  auto* x = static_cast<unsigned char*>(to);
  const auto* y = static_cast<const unsigned char*>(from);
  for_byte_chunks(bytes, 4096, [&](size_t begin, size_t end) { std::memcpy(x + begin, y + begin, end - begin); });
}

}  // namespace harness
