// For the emulated launchers: a case as the kernels' Shape, and a launch's
// outcome as text.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "attention/cuda/attention_cuda.cuh"
#include "attention/host/attn_case.h"

namespace attention::emulated {

inline cuda::Shape shape_of(const AttnCase& c) {
  return cuda::Shape{c.batch, c.heads_q, c.heads_kv, c.n_q, c.n_kv, c.dim, c.scale(), c.causal};
}

// The emulated device's: Hopper's shared memory per block.
inline cuda::DeviceLimits limits() {
  return cuda::DeviceLimits{static_cast<int>(warp_emulation::kMaxDynamicSharedBytes)};
}

inline std::string outcome(cudaError_t error) {
  if (error == cudaSuccess) return "";
  return std::string(cudaGetErrorString(error)) + ": " + warp_emulation::last_failure();
}

}  // namespace attention::emulated
