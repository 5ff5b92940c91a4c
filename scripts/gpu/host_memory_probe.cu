// Where a CUDA process's host memory shows in /proc: RssAnon, RssShmem and
// the mappings holding at least 1 MiB, printed after each step (the
// runtime's start, pageable copies of 128 MiB each way, 128 MiB of pinned
// memory written). It tells which of a GPU worker's host memory the memory
// witness (harness/witness/memory_witness.cpp) can see.
//
// Built with the CUDA path as build/host_memory_probe; run by
// scripts/gpu-session.sh's probe step.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
  std::exit(1);
}

void report(const char* step) {
  std::printf("== %s\n", step);
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("RssAnon", 0) == 0 || line.rfind("RssShmem", 0) == 0 || line.rfind("RssFile", 0) == 0 ||
        line.rfind("VmLck", 0) == 0 || line.rfind("VmPin", 0) == 0) {
      std::printf("  %s\n", line.c_str());
    }
  }
  std::ifstream smaps("/proc/self/smaps");
  std::string header;
  for (std::string line; std::getline(smaps, line);) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (!first.empty() && first.back() != ':') {
      header = line;
    } else if (first == "Rss:") {
      long kib = 0;
      fields >> kib;
      if (kib >= 1024) std::printf("  %8ld KiB  %s\n", kib, header.c_str());
    }
  }
}

}  // namespace

int main() {
  constexpr size_t kBytes = size_t{128} << 20;
  report("before the runtime");
  check(cudaFree(nullptr), "cudaFree(0)");
  report("runtime started");
  void* device = nullptr;
  check(cudaMalloc(&device, kBytes), "cudaMalloc");
  std::vector<char> pageable(kBytes, 1);
  report("128 MiB pageable buffer written");
  check(cudaMemcpy(device, pageable.data(), kBytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  check(cudaMemcpy(pageable.data(), device, kBytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
  report("pageable copies of 128 MiB each way");
  void* pinned = nullptr;
  check(cudaMallocHost(&pinned, kBytes), "cudaMallocHost");
  report("128 MiB pinned, not written");
  check(cudaMemcpy(pinned, device, kBytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the pinned buffer");
  report("128 MiB pinned, written by a copy");
  check(cudaFreeHost(pinned), "cudaFreeHost");
  report("pinned freed");
  return 0;
}
