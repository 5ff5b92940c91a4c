// Launcher of the tensor-core forward: the kernel instance for dim padded to
// 32, 64, 96 or 128.
#include <cstdint>
#include <type_traits>

#include "attention_cuda_tensor_core.cuh"
#include "forward_tensor_core_kernel.cuh"

namespace attention::cuda {
namespace {

using detail::ForwardArgs;
using detail::TensorCoreForwardTiles;

constexpr int64_t kMaxTensorCoreDim = 128;

template <class Fn>
auto with_tensor_core_dim(int64_t dim, Fn&& fn) {
  if (dim <= 32) return fn(std::integral_constant<int, 32>{});
  if (dim <= 64) return fn(std::integral_constant<int, 64>{});
  if (dim <= 96) return fn(std::integral_constant<int, 96>{});
  return fn(std::integral_constant<int, 128>{});
}

}  // namespace

bool tensor_core_forward_supported(const Shape& s, const DeviceLimits& limits, int compute_major, const char** why) {
  if (!supported(s, limits, why)) return false;
  if (s.dim > kMaxTensorCoreDim) {
    *why = "the tensor-core forward handles dim <= 128";
    return false;
  }
  if (compute_major < 8) {
    *why = "the tensor-core forward needs compute capability 8.0 or later (TF32 mma)";
    return false;
  }
  const size_t shared =
      with_tensor_core_dim(s.dim, [](auto dp) { return TensorCoreForwardTiles<decltype(dp)::value>::kSharedBytes; });
  if (shared > static_cast<size_t>(limits.max_shared_per_block)) {
    *why = "the tensor-core forward needs more shared memory per block than this device has";
    return false;
  }
  *why = "";
  return true;
}

cudaError_t forward_tensor_core(const Shape& s, const float* q, const float* k, const float* v, float* o, float* lse,
                                cudaStream_t stream) {
  const ForwardArgs args{
      detail::geometry(s, detail::aligned16(q) && detail::aligned16(k) && detail::aligned16(v)), q, k, v, o, lse};
  return with_tensor_core_dim(s.dim, [&](auto dp) {
    using T = TensorCoreForwardTiles<decltype(dp)::value>;
    const int64_t blocks = s.batch * s.heads_q * ((s.n_q + T::kQueries - 1) / T::kQueries);
    if (blocks == 0) return cudaSuccess;
    auto* kernel = detail::forward_tensor_core_kernel<decltype(dp)::value>;
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::kSharedBytes));
    if (err != cudaSuccess) return err;
    kernel<<<static_cast<unsigned>(blocks), T::kThreads, T::kSharedBytes, stream>>>(args);
    return cudaGetLastError();
  });
}

}  // namespace attention::cuda
