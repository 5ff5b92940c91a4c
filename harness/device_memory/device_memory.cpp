#include "harness/device_memory/device_memory.h"

#include <cstdlib>

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

std::string device_memory_option(DeviceMemoryChoice choice) {
  switch (choice) {
    case DeviceMemoryChoice::stand_in: return "stand-in";
    case DeviceMemoryChoice::harness: return "harness";
    case DeviceMemoryChoice::worker: break;
  }
  return "";
}

}  // namespace harness
