// Launchers of the CUDA attention: the kernel instance for dim padded to
// 32, 64, 96, 128, 192 or 256, each launch checked.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <type_traits>

#include "attention_cuda.cuh"
#include "backward_dkv_kernel.cuh"
#include "backward_dq_kernel.cuh"
#include "forward_kernel.cuh"
#include "launch.cuh"

namespace attention::cuda {
namespace {

using detail::aligned16;
using detail::BackwardArgs;
using detail::ceil_div;
using detail::DkvTiles;
using detail::DqTiles;
using detail::ForwardArgs;
using detail::ForwardTiles;
using detail::geometry;
using detail::launch;

constexpr int64_t kMaxDim = 256;
// Positions inside a tile run up to 255 past n_q or n_kv, still in int.
constexpr int64_t kMaxLength = INT_MAX - 256;

// The width the kernels are compiled for: dim rounded up to a multiple of
// 32, with 160 and 224 taken by the next size up (fewer instances).
int padded_dim(int64_t dim) {
  for (const int dp : {32, 64, 96, 128, 192, 256})
    if (dim <= dp) return dp;
  return 0;
}

// fn(std::integral_constant<int, DP>{}) for the padded width of dim.
template <class Fn>
auto with_padded_dim(int64_t dim, Fn&& fn) {
  switch (padded_dim(dim)) {
    case 32: return fn(std::integral_constant<int, 32>{});
    case 64: return fn(std::integral_constant<int, 64>{});
    case 96: return fn(std::integral_constant<int, 96>{});
    case 128: return fn(std::integral_constant<int, 128>{});
    case 192: return fn(std::integral_constant<int, 192>{});
    default: return fn(std::integral_constant<int, 256>{});
  }
}

template <int DP>
constexpr size_t max_shared_bytes() {
  return std::max({ForwardTiles<DP>::kSharedBytes, DqTiles<DP>::kSharedBytes, DkvTiles<DP>::kSharedBytes});
}
// An A100 (163 KiB a block) runs every instance, a Hopper (227 KiB) too.
static_assert(max_shared_bytes<256>() <= 163 * 1024 && max_shared_bytes<192>() <= 163 * 1024 &&
                  max_shared_bytes<128>() <= 163 * 1024,
              "a kernel outgrew an A100's shared memory");

}  // namespace

bool supported(const Shape& s, const DeviceLimits& limits, const char** why) {
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.n_q < 1 || s.n_kv < 1 || s.dim < 1) {
    *why = "the CUDA kernels need every size >= 1";
    return false;
  }
  if (s.heads_q % s.heads_kv != 0) {
    *why = "heads_q must be a multiple of heads_kv";
    return false;
  }
  if (s.dim > kMaxDim) {
    *why = "the CUDA kernels handle dim <= 256";
    return false;
  }
  if (s.n_q > kMaxLength || s.n_kv > kMaxLength || s.heads_q > INT_MAX) {
    *why = "the CUDA kernels need n_q, n_kv < 2^31 - 256 and heads_q < 2^31";
    return false;
  }
  // Grids: one block per (batch, head, tile of at least 32 rows).
  if (s.batch > INT_MAX / s.heads_q || s.batch * s.heads_q > INT_MAX / ceil_div(s.n_q, 32) ||
      s.batch * s.heads_kv > INT_MAX / ceil_div(s.n_kv, 32)) {
    *why = "the CUDA kernels' grids would need 2^31 blocks or more";
    return false;
  }
  const size_t shared = with_padded_dim(s.dim, [](auto dp) { return max_shared_bytes<decltype(dp)::value>(); });
  if (shared > static_cast<size_t>(limits.max_shared_per_block)) {
    *why = "the CUDA kernels need more shared memory per block than this device has";
    return false;
  }
  *why = "";
  return true;
}

cudaError_t forward(const Shape& s, const float* q, const float* k, const float* v, float* o, float* lse,
                    cudaStream_t stream) {
  const ForwardArgs args{geometry(s, aligned16(q) && aligned16(k) && aligned16(v)), q, k, v, o, lse};
  return with_padded_dim(s.dim, [&](auto dp) {
    constexpr int DP = decltype(dp)::value;
    using T = ForwardTiles<DP>;
    const int64_t blocks = s.batch * s.heads_q * ceil_div(s.n_q, T::kQueries);
    return launch<detail::kThreads>(detail::forward_kernel<DP>, blocks, T::kSharedBytes, stream, args);
  });
}

cudaError_t backward(const Shape& s, const float* q, const float* k, const float* v, const float* o, const float* lse,
                     const float* dout, float* dq, float* dk, float* dv, cudaStream_t stream) {
  const bool aligned = aligned16(q) && aligned16(k) && aligned16(v) && aligned16(dout);
  const BackwardArgs args{geometry(s, aligned), q, k, v, o, lse, dout, dq, dk, dv};
  return with_padded_dim(s.dim, [&](auto dp) {
    constexpr int DP = decltype(dp)::value;
    using Q = DqTiles<DP>;
    using KV = DkvTiles<DP>;
    const int64_t dq_blocks = s.batch * s.heads_q * ceil_div(s.n_q, Q::kQueries);
    cudaError_t err = launch<detail::kThreads>(detail::dq_kernel<DP>, dq_blocks, Q::kSharedBytes, stream, args);
    if (err != cudaSuccess) return err;
    const int64_t kv_blocks = s.batch * s.heads_kv * ceil_div(s.n_kv, KV::kKeys);
    return launch<detail::kThreads>(detail::dkv_kernel<DP>, kv_blocks, KV::kSharedBytes, stream, args);
  });
}

}  // namespace attention::cuda
