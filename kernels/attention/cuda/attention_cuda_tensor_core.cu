// Launchers of the tensor-core kernels: the instance for dim padded to 32,
// 64, 96 or 128, each launch checked.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "attention_cuda_tensor_core.cuh"
#include "backward_tensor_core_kernels.cuh"
#include "forward_tensor_core_kernel.cuh"
#include "launch.cuh"

namespace attention::cuda {
namespace {

using detail::BackwardArgs;
using detail::ceil_div;
using detail::ForwardArgs;
using detail::launch;
using detail::TensorCoreDkvTiles;
using detail::TensorCoreDqTiles;
using detail::TensorCoreForwardTiles;

constexpr int64_t kMaxTensorCoreDim = 128;

template <class Fn>
auto with_tensor_core_dim(int64_t dim, Fn&& fn) {
  if (dim <= 32) return fn(std::integral_constant<int, 32>{});
  if (dim <= 64) return fn(std::integral_constant<int, 64>{});
  if (dim <= 96) return fn(std::integral_constant<int, 96>{});
  return fn(std::integral_constant<int, 128>{});
}

template <int DP>
constexpr size_t max_shared_bytes() {
  return std::max({TensorCoreForwardTiles<DP>::kSharedBytes, TensorCoreForwardTiles<DP, true>::kSharedBytes,
                   TensorCoreDqTiles<DP>::kSharedBytes, TensorCoreDkvTiles<DP>::kSharedBytes,
                   TensorCoreDkvTiles<DP, true>::kSharedBytes});
}
static_assert(max_shared_bytes<128>() <= 163 * 1024, "a tensor-core kernel outgrew an A100's shared memory");

template <bool SPLIT_KV>
cudaError_t launch_forward(const Shape& s, const float* q, const float* k, const float* v, float* o, float* lse,
                           cudaStream_t stream) {
  const ForwardArgs args{
      detail::geometry(s, detail::aligned16(q) && detail::aligned16(k) && detail::aligned16(v)), q, k, v, o, lse};
  return with_tensor_core_dim(s.dim, [&](auto dp) {
    constexpr int DP = decltype(dp)::value;
    using T = TensorCoreForwardTiles<DP, SPLIT_KV>;
    return launch<T::kThreads>(detail::forward_tensor_core_kernel<DP, SPLIT_KV>,
                               s.batch * s.heads_q * ceil_div(s.n_q, T::kQueries), T::kSharedBytes, stream, args);
  });
}

}  // namespace

bool tensor_core_supported(const Shape& s, const DeviceLimits& limits, int compute_major, const char** why) {
  if (!supported(s, limits, why)) return false;
  if (s.dim > kMaxTensorCoreDim) {
    *why = "the tensor-core kernels handle dim <= 128";
    return false;
  }
  if (compute_major < 8) {
    *why = "the tensor-core kernels need compute capability 8.0 or later (TF32 mma)";
    return false;
  }
  const size_t shared = with_tensor_core_dim(s.dim, [](auto dp) { return max_shared_bytes<decltype(dp)::value>(); });
  if (shared > static_cast<size_t>(limits.max_shared_per_block)) {
    *why = "the tensor-core kernels need more shared memory per block than this device has";
    return false;
  }
  *why = "";
  return true;
}

cudaError_t forward_tensor_core(const Shape& s, const float* q, const float* k, const float* v, float* o, float* lse,
                                cudaStream_t stream) {
  return launch_forward<false>(s, q, k, v, o, lse, stream);
}

cudaError_t forward_tensor_core_split_kv(const Shape& s, const float* q, const float* k, const float* v, float* o,
                                         float* lse, cudaStream_t stream) {
  return launch_forward<true>(s, q, k, v, o, lse, stream);
}

cudaError_t backward_tensor_core(const Shape& s, const float* q, const float* k, const float* v, const float* o,
                                 const float* lse, const float* dout, float* dq, float* dk, float* dv,
                                 cudaStream_t stream) {
  const bool aligned = detail::aligned16(q) && detail::aligned16(k) && detail::aligned16(v) && detail::aligned16(dout);
  const BackwardArgs args{detail::geometry(s, aligned), q, k, v, o, lse, dout, dq, dk, dv};
  return with_tensor_core_dim(s.dim, [&](auto dp) {
    constexpr int DP = decltype(dp)::value;
    using Q = TensorCoreDqTiles<DP>;
    using KV = TensorCoreDkvTiles<DP>;
    cudaError_t err =
        launch<Q::kThreads>(detail::dq_tensor_core_kernel<DP>, s.batch * s.heads_q * ceil_div(s.n_q, Q::kQueries),
                            Q::kSharedBytes, stream, args);
    if (err != cudaSuccess) return err;
    return launch<KV::kThreads>(detail::dkv_tensor_core_kernel<DP>, s.batch * s.heads_kv * ceil_div(s.n_kv, KV::kKeys),
                                KV::kSharedBytes, stream, args);
  });
}

cudaError_t backward_tensor_core_one_pass(const Shape& s, const float* q, const float* k, const float* v,
                                          const float* o, const float* lse, const float* dout, float* dq, float* dk,
                                          float* dv, cudaStream_t stream) {
  const bool aligned = detail::aligned16(q) && detail::aligned16(k) && detail::aligned16(v) && detail::aligned16(dout);
  const BackwardArgs args{detail::geometry(s, aligned), q, k, v, o, lse, dout, dq, dk, dv};
  const size_t dq_bytes = sizeof(float) * static_cast<size_t>(s.batch * s.heads_q * s.n_q * s.dim);
  cudaError_t err = cudaMemsetAsync(dq, 0, dq_bytes, stream);
  if (err != cudaSuccess) return err;
  return with_tensor_core_dim(s.dim, [&](auto dp) {
    constexpr int DP = decltype(dp)::value;
    using KV = TensorCoreDkvTiles<DP, true>;
    return launch<KV::kThreads>(detail::dkv_tensor_core_kernel<DP, true>,
                                s.batch * s.heads_kv * ceil_div(s.n_kv, KV::kKeys), KV::kSharedBytes, stream, args);
  });
}

}  // namespace attention::cuda
