// cuda-fast's launchers and kernels, compiled for the warp emulator.
#include "kernels_on_emulator.h"

#include <vector>

#include "softmax_topk/cuda/softmax_topk_cuda.cu"

namespace softmax_topk::emulated {

std::string softmax_topk_on_emulator(const float* logits, int64_t rows, int64_t vocab, int64_t k, int sm_count,
                                     float* probs, int32_t* indices, std::string* path) {
  const char* why = "";
  if (!cuda::supported(rows, vocab, k, &why)) return std::string("unsupported: ") + why;
  const cuda::Plan plan = cuda::make_plan(rows, vocab, k, sm_count);
  *path = plan.path == cuda::Plan::Path::kWarpRows ? "warp rows"
          : plan.segments == 1                     ? "block rows"
                                                   : std::to_string(plan.segments) + " segments a row, merged";
  // 256-byte aligned, as the launcher requires.
  std::vector<double> workspace((plan.workspace_bytes + 255) / sizeof(double) + 32);
  void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(workspace.data()) + 255) / 256 * 256);
  const cudaError_t error = cuda::softmax_topk(plan, logits, rows, vocab, k, probs, indices,
                                               plan.workspace_bytes ? aligned : nullptr, nullptr);
  if (error == cudaSuccess) return "";
  return std::string(cudaGetErrorString(error)) + ": " + warp_emulation::last_failure();
}

}  // namespace softmax_topk::emulated
