// The emulated device's memory and its multiprocessor count.
#include <cstdlib>
#include <map>

#include "warp_emulation/stand_in/cuda_runtime.h"

namespace warp_emulation {
namespace {

std::map<void*, size_t>& allocations() {
  static std::map<void*, size_t> live;
  return live;
}

size_t g_in_use = 0;
int g_multiprocessors = 8;

}  // namespace

cudaError_t device_malloc(void** p, size_t bytes) {
  const size_t rounded = (bytes + 255) / 256 * 256;
  if (rounded > kDeviceMemoryBytes - g_in_use) return cudaErrorMemoryAllocation;
  *p = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
  if (*p == nullptr) return cudaErrorMemoryAllocation;
  allocations()[*p] = rounded;
  g_in_use += rounded;
  return cudaSuccess;
}

cudaError_t device_free(void* p) {
  if (p == nullptr) return cudaSuccess;
  const auto found = allocations().find(p);
  if (found == allocations().end()) return cudaErrorInvalidValue;
  g_in_use -= found->second;
  allocations().erase(found);
  std::free(p);
  return cudaSuccess;
}

size_t device_bytes_in_use() { return g_in_use; }

int multiprocessors() { return g_multiprocessors; }
void set_multiprocessors(int count) { g_multiprocessors = count; }

}  // namespace warp_emulation
