// How the attention launchers start a kernel.
#ifndef ATTENTION_CUDA_LAUNCH_CUH
#define ATTENTION_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda_launch.cuh"

namespace attention::cuda::detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// kernel<<<blocks, THREADS, shared, stream>>>(args); nothing for no blocks.
// Past 48 KiB of dynamic shared memory a kernel must opt in.
template <int THREADS, class Args>
cudaError_t launch(void (*kernel)(Args), int64_t blocks, size_t shared, cudaStream_t stream, const Args& args) {
  if (blocks == 0) return cudaSuccess;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (err != cudaSuccess) return err;
  kernels::common::start_kernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(THREADS), shared, stream, args);
  return cudaGetLastError();
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_LAUNCH_CUH
