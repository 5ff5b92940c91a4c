// The project's paged KV cache on the GPU (host API). Not tied to the harness
// ABI: submissions/kv_cache/cuda-fast (fp32) and cuda-fast-fp16 wrap it.
//
// Memory: at create, one device pool of blocks (block_layout.h; the budget's
// worth, no more than max_sequences x max_tokens need, and at most half the
// free device memory) and a device block table [max_sequences,
// ceil(max_tokens / 8)] int32. The host keeps the BlockTable; an append that
// adds blocks copies the new ids into the sequence's device row (stream
// ordered, before the scatter kernel that reads them). bytes_in_use()
// counts the blocks owned by live sequences, as the CPU cache does.
//
// Attend: the host plans work items (work_plan.h) and uploads them only when
// they differ from the previous call's (repeating an attend with no append
// between, as timed repetitions do, uploads nothing; a decode step's append
// moves key_end, so real decoding uploads every step); then the attention kernel and, for split rows, the merge
// kernel, all on the caller's stream. Calls are assumed to come on one stream
// at a time, as the harness makes them.
#ifndef KV_CACHE_CUDA_PAGED_CACHE_CUDA_CUH
#define KV_CACHE_CUDA_PAGED_CACHE_CUDA_CUH

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kv_cache/block_layout.h"
#include "kv_cache/block_table.h"
#include "kv_cache/cuda/launch.cuh"
#include "kv_cache/cuda/work_plan.h"

namespace kvcache::cuda {

struct CacheConfig {
  int64_t layers, query_heads, kv_heads, head_dim;
  int64_t max_sequences, max_tokens, memory_budget;
};

enum class Status { ok, out_of_memory, invalid, unsupported, cuda_error };

class PagedCache {
 public:
  // *cache on ok; otherwise *why says what failed.
  static Status create(const CacheConfig& config, Format format, std::unique_ptr<PagedCache>* cache, std::string* why);
  ~PagedCache();
  PagedCache(const PagedCache&) = delete;
  PagedCache& operator=(const PagedCache&) = delete;

  // k, v [n, kv_heads, head_dim] float32, device memory.
  Status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v, cudaStream_t stream,
                std::string* why);
  // sequences, query_lengths: host memory; q, out: device memory.
  Status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths, const float* q,
                float* out, cudaStream_t stream, std::string* why);
  bool release(int64_t sequence) { return table_.release(sequence); }
  int64_t bytes_in_use() const { return table_.bytes_in_use(); }

 private:
  PagedCache(const CacheConfig& config, Format format, int64_t pool_blocks, int sm_count);
  Status fail_cuda(const char* what, cudaError_t err, std::string* why) const;
  // Makes *buffer hold at least `bytes` (grow-only; cudaFree waits for the device).
  cudaError_t reserve(void** buffer, int64_t* capacity, int64_t bytes);

  CacheConfig config_;
  Format format_;
  BlockLayout layout_;
  int64_t table_stride_;  // entries per device block-table row
  BlockTable table_;
  int sm_count_;

  void* pool_ = nullptr;             // device [pool blocks, block_elems] of the format's type
  int32_t* device_table_ = nullptr;  // device [max_sequences, table_stride_]
  void* work_ = nullptr;             // device: the plan's items, then its merge groups
  int64_t work_capacity_ = 0;
  void* partials_ = nullptr;  // device: partial softmax states of split rows
  int64_t partials_capacity_ = 0;

  std::vector<PlanEntry> entries_;
  Plan plan_;
  std::vector<char> uploaded_;  // what work_ holds now (empty: unknown)
  cudaStream_t uploaded_on_ = nullptr;
};

}  // namespace kvcache::cuda

#endif  // KV_CACHE_CUDA_PAGED_CACHE_CUDA_CUH
