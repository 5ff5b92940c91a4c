// Launchers of the CUDA cache's kernels (host API). Each returns the launch's
// cudaError_t (cudaGetLastError() right after it); none allocates or
// synchronises.
#ifndef KV_CACHE_CUDA_LAUNCH_CUH
#define KV_CACHE_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>

#include <cstdint>

#include "kv_cache/block_layout.h"
#include "kv_cache/cuda/work_plan.h"

namespace kvcache::cuda {

// How K and V are stored, and in which type scores are accumulated.
enum class Format {
  fp32,  // float K/V, double scores
  fp16,  // __half K/V, float scores
};

inline int64_t element_bytes(Format f) { return f == Format::fp32 ? 4 : 2; }

// Query heads of a kv head served by one thread block: the largest power of
// two dividing the group, up to the register budget of the format.
int group_tile(Format format, int64_t group);

// True when the kernels handle head_dim (32 lanes x 2 or 4 dimensions).
bool head_dim_supported(int64_t head_dim);

struct AppendLaunch {
  void* pool;
  const int32_t* blocks;  // the sequence's device block-table row
  const float* k;
  const float* v;
  BlockLayout layout;
  int64_t first_position, n;
  int32_t layer;
};
cudaError_t launch_append(Format format, const AppendLaunch& a, int sm_count, cudaStream_t stream);

struct AttendLaunch {
  const void* pool;
  const int32_t* table;  // [max_sequences, table_stride]
  int64_t table_stride;
  const WorkItem* items;
  int64_t n_items;
  const MergeGroup* merges;
  int64_t n_merges;
  const float* q;
  float* out;
  void* partials;  // partial_bytes(format, n_partials, ...) bytes
  int64_t n_partials;
  BlockLayout layout;
  int32_t layer;
  int32_t query_heads;
};
// Bytes of partial states for n_partials slots.
int64_t partial_bytes(Format format, int64_t n_partials, int64_t query_heads, int64_t head_dim);
cudaError_t launch_attend(Format format, const AttendLaunch& a, cudaStream_t stream);

}  // namespace kvcache::cuda

#endif  // KV_CACHE_CUDA_LAUNCH_CUH
