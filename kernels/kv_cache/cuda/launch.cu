#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "kv_cache/cuda/append_kernel.cuh"
#include "kv_cache/cuda/attend_kernel.cuh"
#include "kv_cache/cuda/merge_kernel.cuh"
#include "common/cuda_launch.cuh"
#include "launch.cuh"

namespace kvcache::cuda {

namespace {

// Register budget: a group tile keeps GT x VEC query values (in S) and
// accumulators per lane, next to a whole K and V tile (2 x 8 x VEC floats).
// With double scores, 4 heads already take ~170 registers at d = 128.
int max_group_tile(Format format) { return format == Format::fp32 ? 4 : 8; }

// Partial states laid out as [acc: n, Hq, d floats][m: n, Hq S][l: n, Hq floats].
template <typename S>
struct PartialViews {
  float* acc;
  S* m;
  float* l;
};

template <typename S>
PartialViews<S> partial_views(void* base, int64_t n_partials, int64_t query_heads, int64_t head_dim) {
  char* p = static_cast<char*>(base);
  PartialViews<S> v;
  v.acc = reinterpret_cast<float*>(p);
  p += n_partials * query_heads * head_dim * static_cast<int64_t>(sizeof(float));
  v.m = reinterpret_cast<S*>(p);
  p += n_partials * query_heads * static_cast<int64_t>(sizeof(S));
  v.l = reinterpret_cast<float*>(p);
  return v;
}

template <int GT, typename T, typename S>
void launch_tile(const AttendParams<T, S>& p, dim3 grid, bool d128, cudaStream_t stream) {
  if (d128)
    kernels::common::start_kernel(attend_kernel<4, GT, T, S>, grid, dim3(kThreads), 0, stream, p);
  else
    kernels::common::start_kernel(attend_kernel<2, GT, T, S>, grid, dim3(kThreads), 0, stream, p);
}

template <typename T, typename S>
cudaError_t attend_typed(const AttendLaunch& a, int gt, cudaStream_t stream) {
  AttendParams<T, S> p;
  p.pool = static_cast<const T*>(a.pool);
  p.table = a.table;
  p.table_stride = a.table_stride;
  p.items = a.items;
  p.q = a.q;
  p.out = a.out;
  const PartialViews<S> views = partial_views<S>(a.partials, a.n_partials, a.query_heads, a.layout.head_dim);
  p.partial_acc = views.acc;
  p.partial_m = views.m;
  p.partial_l = views.l;
  p.layout = a.layout;
  p.block_elems = a.layout.block_elems();
  p.layer = a.layer;
  p.query_heads = a.query_heads;
  p.group = static_cast<int32_t>(a.query_heads / a.layout.kv_heads);
  p.head_tiles = p.group / gt;
  p.q_scale = static_cast<S>(1.4426950408889634 / std::sqrt(static_cast<double>(a.layout.head_dim)));

  // Items go on grid.x (up to 2^31 - 1); kv heads x head tiles on grid.y.
  const dim3 grid(static_cast<unsigned>(a.n_items), static_cast<unsigned>(a.layout.kv_heads * p.head_tiles));
  const bool d128 = a.layout.head_dim == 128;
  switch (gt) {
    case 1: launch_tile<1>(p, grid, d128, stream); break;
    case 2: launch_tile<2>(p, grid, d128, stream); break;
    case 4: launch_tile<4>(p, grid, d128, stream); break;
    default:
      // Only the fp16 format tiles 8 heads (max_group_tile).
      if constexpr (sizeof(T) == 2) launch_tile<8>(p, grid, d128, stream);
      break;
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess || a.n_merges == 0) return err;

  MergeParams<S> mp;
  mp.groups = a.merges;
  mp.partial_acc = views.acc;
  mp.partial_m = views.m;
  mp.partial_l = views.l;
  mp.out = a.out;
  mp.query_heads = a.query_heads;
  mp.head_dim = static_cast<int32_t>(a.layout.head_dim);
  const dim3 merge_grid(static_cast<unsigned>(a.n_merges),
                        static_cast<unsigned>((a.query_heads + kMergeWarps - 1) / kMergeWarps));
  kernels::common::start_kernel(merge_kernel<S>, merge_grid, dim3(32 * kMergeWarps), 0, stream, mp);
  return cudaGetLastError();
}

template <typename T>
cudaError_t append_typed(const AppendLaunch& a, int sm_count, cudaStream_t stream) {
  AppendParams<T> p;
  p.pool = static_cast<T*>(a.pool);
  p.blocks = a.blocks;
  p.k = a.k;
  p.v = a.v;
  p.layout = a.layout;
  p.block_elems = a.layout.block_elems();
  p.first_position = a.first_position;
  p.n = a.n;
  p.layer = a.layer;
  constexpr int kAppendThreads = 256;
  const int64_t total = a.n * a.layout.kv_heads * a.layout.head_dim;
  const int64_t blocks = std::min<int64_t>((total + kAppendThreads - 1) / kAppendThreads, int64_t{8} * sm_count);
  kernels::common::start_kernel(append_kernel<T>, dim3(static_cast<unsigned>(blocks)), dim3(kAppendThreads), 0, stream,
                                p);
  return cudaGetLastError();
}

}  // namespace

int group_tile(Format format, int64_t group) {
  int gt = 1;
  while (gt * 2 <= max_group_tile(format) && group % (gt * 2) == 0) gt *= 2;
  return gt;
}

bool head_dim_supported(int64_t head_dim) { return head_dim == 64 || head_dim == 128; }

int64_t partial_bytes(Format format, int64_t n_partials, int64_t query_heads, int64_t head_dim) {
  const int64_t score_bytes = format == Format::fp32 ? 8 : 4;
  return n_partials * query_heads * (head_dim * 4 + score_bytes + 4);
}

cudaError_t launch_append(Format format, const AppendLaunch& a, int sm_count, cudaStream_t stream) {
  return format == Format::fp32 ? append_typed<float>(a, sm_count, stream) : append_typed<__half>(a, sm_count, stream);
}

cudaError_t launch_attend(Format format, const AttendLaunch& a, cudaStream_t stream) {
  const int gt = group_tile(format, a.query_heads / a.layout.kv_heads);
  return format == Format::fp32 ? attend_typed<float, double>(a, gt, stream)
                                : attend_typed<__half, float>(a, gt, stream);
}

}  // namespace kvcache::cuda
