// Launchers of the CUDA layernorm: a kernel instance per shape (plan_*), each
// launch checked.
#include <climits>
#include <utility>

#include "backward_kernel.cuh"
#include "common/cuda_launch.cuh"
#include "forward_kernel.cuh"
#include "layernorm_cuda.cuh"

namespace layernorm::cuda {
namespace {

using detail::block_threads;

// Cached-path limits: a forward row group keeps up to 8 vectors per thread
// (<= 512 threads: 1024 threads x 32 floats would leave < 32 registers for
// the rest); a backward row group 4 vectors of x and 4 of dy per thread.
// dim <= 16384 stays cached either way with float4 loads.
constexpr int kForwardMaxCachedThreads = 512;
constexpr int kBackwardMaxCachedThreads = 1024;
constexpr int kLongRowThreads = 1024;
// Uncached backward: resident blocks per SM assumed for the grid size.
constexpr int kLongRowBlocksPerSm = 2;
// Shared memory the kernels declare statically (reduction scratch), kept
// free below the per-block limit.
constexpr size_t kStaticSharedReserve = 1024;
constexpr size_t kDefaultDynamicSharedLimit = 48 * 1024;

using ForwardFn = void (*)(const float*, const float*, const float*, int64_t, int, float, float*, RowStats*);
using BackwardFn = void (*)(const float*, const float*, const float*, const RowStats*, int64_t, int, int64_t, float*,
                            float*);

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// kernel<<<blocks, block, shared, stream>>>(args...).
template <class... Params, class... Args>
void start(void (*kernel)(Params...), int64_t blocks, dim3 block, size_t shared, cudaStream_t stream,
           Args&&... args) {
  kernels::common::start_kernel(kernel, dim3(static_cast<unsigned>(blocks)), block, shared, stream,
                                std::forward<Args>(args)...);
}

int pow2_at_least(int64_t n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

template <int VEC>
ForwardFn forward_fn(int tpr, bool cached) {
  using detail::forward_kernel;
  constexpr int V = detail::kForwardVectorsPerThread;
  if (!cached) return forward_kernel<VEC, kLongRowThreads, 0>;
  switch (tpr) {
    case 1: return forward_kernel<VEC, 1, V>;
    case 2: return forward_kernel<VEC, 2, V>;
    case 4: return forward_kernel<VEC, 4, V>;
    case 8: return forward_kernel<VEC, 8, V>;
    case 16: return forward_kernel<VEC, 16, V>;
    case 32: return forward_kernel<VEC, 32, V>;
    case 64: return forward_kernel<VEC, 64, V>;
    case 128: return forward_kernel<VEC, 128, V>;
    case 256: return forward_kernel<VEC, 256, V>;
    case 512: return forward_kernel<VEC, 512, V>;
    default: return nullptr;
  }
}

template <int VEC>
BackwardFn backward_fn(int tpr, bool cached) {
  using detail::backward_kernel;
  constexpr int V = detail::kBackwardVectorsPerThread;
  if (!cached) return backward_kernel<VEC, kLongRowThreads, 0>;
  switch (tpr) {
    case 1: return backward_kernel<VEC, 1, V>;
    case 2: return backward_kernel<VEC, 2, V>;
    case 4: return backward_kernel<VEC, 4, V>;
    case 8: return backward_kernel<VEC, 8, V>;
    case 16: return backward_kernel<VEC, 16, V>;
    case 32: return backward_kernel<VEC, 32, V>;
    case 64: return backward_kernel<VEC, 64, V>;
    case 128: return backward_kernel<VEC, 128, V>;
    case 256: return backward_kernel<VEC, 256, V>;
    case 512: return backward_kernel<VEC, 512, V>;
    case 1024: return backward_kernel<VEC, 1024, V>;
    default: return nullptr;
  }
}

ForwardFn forward_fn(const Plan& p) {
  return p.vec == 4 ? forward_fn<4>(p.threads_per_row, p.cached) : forward_fn<1>(p.threads_per_row, p.cached);
}
BackwardFn backward_fn(const Plan& p) {
  return p.vec == 4 ? backward_fn<4>(p.threads_per_row, p.cached) : backward_fn<1>(p.threads_per_row, p.cached);
}

}  // namespace

bool supported(int64_t rows, int64_t dim, const char** why) {
  // The uncached forward launches one block per row.
  if (dim > INT_MAX || rows > INT_MAX) {
    *why = "dim and rows must fit in int32 for the CUDA kernels";
    return false;
  }
  *why = "";
  return true;
}

Plan plan_forward(int64_t rows, int64_t dim, bool aligned) {
  Plan p;
  p.vec = aligned ? 4 : 1;
  const int64_t nvec = dim / p.vec;
  const int tpr = pow2_at_least(ceil_div(nvec, detail::kForwardVectorsPerThread));
  p.cached = tpr <= kForwardMaxCachedThreads;
  p.threads_per_row = p.cached ? tpr : kLongRowThreads;
  p.rows_per_block = block_threads(p.threads_per_row) / p.threads_per_row;
  p.blocks = ceil_div(rows, p.rows_per_block);
  return p;
}

cudaError_t plan_backward(int64_t rows, int64_t dim, bool aligned, const DeviceLimits& limits, Plan* plan) {
  Plan p;
  p.vec = aligned ? 4 : 1;
  const int64_t nvec = dim / p.vec;
  const int tpr = pow2_at_least(ceil_div(nvec, detail::kBackwardVectorsPerThread));
  const int64_t group_rows = tpr <= kBackwardMaxCachedThreads ? block_threads(tpr) / tpr : 1;
  const size_t shared = static_cast<size_t>(group_rows) * 2 * static_cast<size_t>(dim) * sizeof(float);
  p.cached = tpr <= kBackwardMaxCachedThreads &&
             shared + kStaticSharedReserve <= static_cast<size_t>(limits.max_shared_per_block);
  int64_t max_blocks = static_cast<int64_t>(limits.sm_count) * kLongRowBlocksPerSm;
  if (p.cached) {
    p.threads_per_row = tpr;
    p.shared_bytes = shared;
    const BackwardFn fn = backward_fn(p);
    cudaError_t err = cudaSuccess;
    // The default limit covers static and dynamic shared memory together.
    if (shared + kStaticSharedReserve > kDefaultDynamicSharedLimit)
      err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (err != cudaSuccess) return err;
    int per_sm = 0;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, block_threads(tpr), shared);
    if (err != cudaSuccess) return err;
    max_blocks = static_cast<int64_t>(limits.sm_count) * (per_sm > 0 ? per_sm : 1);
  } else {
    p.threads_per_row = kLongRowThreads;
    p.shared_bytes = 0;
  }
  // Contiguous row tiles, a whole number of row-group rounds each, as many
  // blocks as fit at once: each block then writes one partial row.
  const int64_t rows_per_round = block_threads(p.threads_per_row) / p.threads_per_row;
  const int64_t rounds = ceil_div(ceil_div(rows, rows_per_round), max_blocks);
  p.rows_per_block = rounds * rows_per_round;
  p.blocks = ceil_div(rows, p.rows_per_block);
  p.workspace_bytes = static_cast<size_t>(p.blocks) * 2 * static_cast<size_t>(dim) * sizeof(float);
  *plan = p;
  return cudaSuccess;
}

cudaError_t forward(const Plan& plan, const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim,
                    float eps, float* y, RowStats* saved, cudaStream_t stream) {
  const ForwardFn fn = forward_fn(plan);
  if (fn == nullptr) return cudaErrorInvalidValue;
  start(fn, plan.blocks, dim3(block_threads(plan.threads_per_row)), 0, stream, x, gamma, beta, rows,
        static_cast<int>(dim), eps, y, saved);
  return cudaGetLastError();
}

cudaError_t backward(const Plan& plan, const float* dy, const float* x, const float* gamma, const RowStats* saved,
                     int64_t rows, int64_t dim, float* dx, float* dgamma, float* dbeta, void* workspace,
                     cudaStream_t stream) {
  const BackwardFn fn = backward_fn(plan);
  if (fn == nullptr) return cudaErrorInvalidValue;
  float* partials = static_cast<float*>(workspace);
  start(fn, plan.blocks, dim3(block_threads(plan.threads_per_row)), plan.shared_bytes, stream, dy, x, gamma, saved,
        rows, static_cast<int>(dim), plan.rows_per_block, dx, partials);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  const dim3 block(detail::kReduceColumns, detail::kReduceSlices);
  start(detail::reduce_partials_kernel, ceil_div(dim, detail::kReduceColumns), block, 0, stream, partials,
        static_cast<int>(plan.blocks), static_cast<int>(dim), dgamma, dbeta);
  return cudaGetLastError();
}

}  // namespace layernorm::cuda
