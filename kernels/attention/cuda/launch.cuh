// How the attention launchers start a kernel.
#ifndef ATTENTION_CUDA_LAUNCH_CUH
#define ATTENTION_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace attention::cuda::detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// kernel<<<blocks, THREADS, shared, stream>>>(args); nothing for no blocks.
// Past 48 KiB of dynamic shared memory a kernel must opt in.
template <int THREADS, class Args>
cudaError_t launch(void (*kernel)(Args), int64_t blocks, size_t shared, cudaStream_t stream, const Args& args) {
  if (blocks == 0) return cudaSuccess;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (err != cudaSuccess) return err;
#ifdef WARP_EMULATION  // built for the host's warp emulator (tests/support/warp_emulation)
  (void)stream;
  warp_emulation::launch(kernel, blocks, THREADS, shared, args);
#else
  kernel<<<static_cast<unsigned>(blocks), THREADS, shared, stream>>>(args);
#endif
  return cudaGetLastError();
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_LAUNCH_CUH
