#include "harness/device_memory/device_memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness/core/error.h"

namespace harness {

DeviceMemoryChoice device_memory_choice() {
  const char* chosen = std::getenv("HARNESS_DEVICE_MEMORY");
  if (chosen == nullptr || *chosen == '\0') return DeviceMemoryChoice::worker;
  const std::string name = chosen;
  if (name == "stand-in") return DeviceMemoryChoice::stand_in;
  if (name == "harness") return DeviceMemoryChoice::harness;
  throw UsageError(
      fmt::format("HARNESS_DEVICE_MEMORY='{}': accepted are 'stand-in' (CPU workers compute in device "
                  "twins the harness owns) and 'harness' (GPU workers compute in CUDA memory the "
                  "harness owns), or leave it unset",
                  name));
}

void check_twin_range(const char* device, const char* copy, const std::string& what, size_t offset, size_t bytes,
                      size_t size) {
  HARNESS_CHECK(offset <= size && bytes <= size - offset,
                "{} of bytes [{}, {}) of the {} device twin of {}, which holds {} bytes", copy, offset, offset + bytes,
                device, what, size);
}

void DeviceTwin::write(const TwinWrites& writes) {
  for (const TwinWrites::Span& s : writes.spans) upload(s.from, s.offset, s.bytes);
  if (!writes.word_offsets.empty()) write_words(writes.word_offsets, writes.words);
}

void DeviceTwin::write_words(const std::vector<uint64_t>& offsets, const std::vector<uint64_t>& words) {
  for (size_t i = 0; i < offsets.size(); ++i) upload(&words[i], offsets[i], 8);
}

bool DeviceTwin::holds(const void* expected, size_t offset, size_t bytes) {
  constexpr size_t kPiece = size_t{8} << 20;
  if (piece_.size() < std::min(bytes, kPiece)) piece_.resize(std::min(bytes, kPiece));
  const auto* want = static_cast<const unsigned char*>(expected);
  for (size_t done = 0; done < bytes; done += kPiece) {
    const size_t n = std::min(kPiece, bytes - done);
    download(piece_.data(), offset + done, n);
    if (std::memcmp(piece_.data(), want + done, n) != 0) return false;
  }
  return true;
}

std::string device_memory_option(DeviceMemoryChoice choice) {
  switch (choice) {
    case DeviceMemoryChoice::stand_in: return "stand-in";
    case DeviceMemoryChoice::harness: return "harness";
    case DeviceMemoryChoice::worker: break;
  }
  return "";
}

}  // namespace harness
