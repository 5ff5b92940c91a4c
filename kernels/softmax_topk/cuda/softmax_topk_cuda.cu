// Launchers of the CUDA softmax_topk: picks a path per shape (make_plan) and
// launches it, checking each launch.
#include <climits>
#include <utility>

#include "common/cuda_launch.cuh"
#include "softmax_topk_cuda.cuh"
#include "softmax_topk_kernels.cuh"

namespace softmax_topk::cuda {
namespace {

using detail::Key;
using detail::SoftmaxState;

// Small rows go to the warp path: a block per row would leave most of its
// 512 threads idle.
constexpr int64_t kWarpMaxVocab = 4096;
constexpr int64_t kWarpMaxK = 64;
static_assert(kWarpMaxK <= detail::kWarpCapacity - 4 * 32, "warp buffer: k + one tile");
static_assert(kMaxK <= detail::kBlockCapacity - 4 * detail::kBlockThreads, "block buffer");

// A segment is worth a block only when it streams a decent amount of data.
constexpr int64_t kMinSegmentLength = 16384;
// Resident blocks of block_rows per SM (its __launch_bounds__).
constexpr int64_t kBlocksPerSm = 2;

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// kernel<<<blocks, threads, 0, stream>>>(args...).
template <class... Params, class... Args>
void start(void (*kernel)(Params...), unsigned blocks, int threads, cudaStream_t stream, Args&&... args) {
  kernels::common::start_kernel(kernel, dim3(blocks), dim3(static_cast<unsigned>(threads)), 0, stream,
                                std::forward<Args>(args)...);
}

}  // namespace

bool supported(int64_t rows, int64_t vocab, int64_t k, const char** why) {
  if (k > kMaxK) {
    *why = "k above 1024 is not supported by the CUDA kernels";
    return false;
  }
  // Grid x is at most 2^31 - 1 blocks; segments only ever reduce a grid that
  // already fits (rows < SM count).
  if (rows > INT_MAX || (vocab <= kWarpMaxVocab && k <= kWarpMaxK &&
                         (rows + detail::kWarpsPerBlock - 1) / detail::kWarpsPerBlock > INT_MAX)) {
    *why = "more rows than one grid can hold";
    return false;
  }
  *why = "";
  return true;
}

Plan make_plan(int64_t rows, int64_t vocab, int64_t k, int sm_count) {
  Plan plan;
  if (vocab <= kWarpMaxVocab && k <= kWarpMaxK) {
    plan.path = Plan::Path::kWarpRows;
    return plan;
  }
  plan.path = Plan::Path::kBlockRows;
  plan.segments = 1;
  plan.segment_length = vocab;
  // Fewer rows than SMs: split rows so that about kBlocksPerSm blocks per SM
  // stream at once (one wave), each segment long enough to be worth a block.
  const int64_t slots = kBlocksPerSm * (sm_count > 0 ? sm_count : 1);
  if (rows < sm_count) {
    int64_t segments = slots / rows;
    if (segments > vocab / kMinSegmentLength) segments = vocab / kMinSegmentLength;
    if (segments > detail::kBlockThreads) segments = detail::kBlockThreads;
    if (segments > 1) {
      // A multiple of 4 keeps every segment's float4 phase equal to the row's.
      const int64_t length = ((vocab + segments - 1) / segments + 3) / 4 * 4;
      plan.segment_length = length;
      plan.segments = static_cast<int>((vocab + length - 1) / length);
    }
  }
  if (plan.segments > 1) {
    const size_t pieces = static_cast<size_t>(rows) * static_cast<size_t>(plan.segments);
    plan.workspace_bytes =
        align256(pieces * static_cast<size_t>(k) * sizeof(Key)) + align256(pieces * sizeof(SoftmaxState));
  }
  return plan;
}

cudaError_t softmax_topk(const Plan& plan, const float* logits, int64_t rows, int64_t vocab, int64_t k, float* probs,
                         int32_t* indices, void* workspace, cudaStream_t stream) {
  const int k32 = static_cast<int>(k);
  if (plan.path == Plan::Path::kWarpRows) {
    const unsigned blocks = static_cast<unsigned>((rows + detail::kWarpsPerBlock - 1) / detail::kWarpsPerBlock);
    start(detail::softmax_topk_warp_rows, blocks, detail::kWarpsPerBlock * 32, stream, logits, rows, vocab, k32, probs,
          indices);
    return cudaGetLastError();
  }
  if (plan.segments == 1) {
    start(detail::softmax_topk_block_rows, static_cast<unsigned>(rows), detail::kBlockThreads, stream, logits, vocab, k32,
          1, vocab, probs, indices, nullptr, nullptr);
    return cudaGetLastError();
  }
  const size_t pieces = static_cast<size_t>(rows) * static_cast<size_t>(plan.segments);
  Key* partial_keys = static_cast<Key*>(workspace);
  SoftmaxState* partial_states = reinterpret_cast<SoftmaxState*>(
      static_cast<char*>(workspace) + align256(pieces * static_cast<size_t>(k) * sizeof(Key)));
  start(detail::softmax_topk_block_rows, static_cast<unsigned>(pieces), detail::kBlockThreads, stream, logits, vocab, k32,
        plan.segments, plan.segment_length, probs, indices, partial_keys, partial_states);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  start(detail::softmax_topk_merge, static_cast<unsigned>(rows), detail::kBlockThreads, stream, partial_keys,
        partial_states, plan.segments, k32, probs, indices);
  return cudaGetLastError();
}

}  // namespace softmax_topk::cuda
