// How our CUDA launchers start a kernel: kernel<<<grid, block, shared,
// stream>>>(args...). Built for the host's warp emulator
// (tests/support/warp_emulation), the same launch runs there instead, block
// by block, before it returns.
#ifndef KERNELS_COMMON_CUDA_LAUNCH_CUH
#define KERNELS_COMMON_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace kernels::common {

template <class... Params, class... Args>
void start_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, cudaStream_t stream,
                  Args&&... args) {
#ifdef WARP_EMULATION
  (void)stream;
  warp_emulation::launch(kernel, grid, block, shared, std::forward<Args>(args)...);
#else
  kernel<<<grid, block, shared, stream>>>(std::forward<Args>(args)...);
#endif
}

}  // namespace kernels::common

#endif  // KERNELS_COMMON_CUDA_LAUNCH_CUH
