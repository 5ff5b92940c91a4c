// cuda-fast's launchers and kernels, compiled for the warp emulator.
#include "kernels_on_emulator.h"

#include <vector>

#include "layernorm_backward/cuda/layernorm_cuda.cu"

namespace layernorm::emulated {
namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

std::string describe(const cuda::Plan& p) {
  return std::string(p.cached ? "cached" : "uncached") + ", float" + (p.vec == 4 ? "4" : "") + " loads, " +
         std::to_string(p.threads_per_row) + " threads a row, " + std::to_string(p.blocks) + " blocks";
}

std::string outcome(cudaError_t error) {
  if (error == cudaSuccess) return "";
  return std::string(cudaGetErrorString(error)) + ": " + warp_emulation::last_failure();
}

}  // namespace

std::string forward_on_emulator(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim,
                                float eps, float* y, RowStats* saved, std::string* plan) {
  const char* why = "";
  if (!cuda::supported(rows, dim, &why)) return std::string("unsupported: ") + why;
  const bool aligned = dim % 4 == 0 && aligned16(x) && aligned16(gamma) && aligned16(beta) && aligned16(y);
  const cuda::Plan p = cuda::plan_forward(rows, dim, aligned);
  *plan = describe(p);
  return outcome(cuda::forward(p, x, gamma, beta, rows, dim, eps, y, saved, nullptr));
}

std::string backward_on_emulator(const float* dy, const float* x, const float* gamma, const RowStats* saved,
                                 int64_t rows, int64_t dim, int sm_count, float* dx, float* dgamma, float* dbeta,
                                 std::string* plan) {
  const bool aligned = dim % 4 == 0 && aligned16(dy) && aligned16(x) && aligned16(gamma) && aligned16(dx);
  cuda::DeviceLimits limits;
  limits.sm_count = sm_count;
  limits.max_shared_per_block = static_cast<int>(warp_emulation::kMaxDynamicSharedBytes);
  cuda::Plan p;
  const cudaError_t planned = cuda::plan_backward(rows, dim, aligned, limits, &p);
  if (planned != cudaSuccess) return outcome(planned);
  *plan = describe(p);
  std::vector<float> workspace(p.workspace_bytes / sizeof(float) + 1);
  return outcome(cuda::backward(p, dy, x, gamma, saved, rows, dim, dx, dgamma, dbeta, workspace.data(), nullptr));
}

}  // namespace layernorm::emulated
