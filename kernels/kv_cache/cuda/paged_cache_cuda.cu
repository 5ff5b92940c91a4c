#include <algorithm>

#include "paged_cache_cuda.cuh"

namespace kvcache::cuda {

namespace {

// A row split into chunks keeps at least this many keys per chunk.
constexpr int64_t kMinSplitKeys = 128;
// Thread blocks per SM that the planner aims at: enough waves that the last
// one's tail costs little.
constexpr int64_t kBlocksPerSm = 16;

int64_t block_bytes(const CacheConfig& c, Format f) {
  return layout_of(c).block_elems() * element_bytes(f) + static_cast<int64_t>(sizeof(int32_t));
}

int64_t table_stride(const CacheConfig& c) { return (c.max_tokens + kBlockTokens - 1) / kBlockTokens; }

}  // namespace

Status PagedCache::create(const CacheConfig& c, Format format, std::unique_ptr<PagedCache>* cache, std::string* why) {
  if (!head_dim_supported(c.head_dim)) {
    *why = "head_dim " + std::to_string(c.head_dim) + " is not supported (64 or 128)";
    return Status::unsupported;
  }
  // The attention and merge grids have a row per query head (y stops at
  // 65535); the work plan holds key positions in int32.
  if (c.query_heads > 65535 || c.max_tokens > INT32_MAX) {
    *why = "query_heads " + std::to_string(c.query_heads) + " or max_tokens " + std::to_string(c.max_tokens) +
           " past what the kernels launch (65535 heads, 2^31 - 1 tokens)";
    return Status::unsupported;
  }
  // Checked by division first: max_sequences x table_stride can pass int64.
  if (table_stride(c) > (int64_t{1} << 30) / static_cast<int64_t>(sizeof(int32_t)) / c.max_sequences) {
    *why = "max_sequences x max_tokens needs a block table above 1 GiB";
    return Status::unsupported;
  }
  const int64_t table_bytes = c.max_sequences * table_stride(c) * static_cast<int64_t>(sizeof(int32_t));
  int device = 0, sm_count = 0;
  size_t free_bytes = 0, total_bytes = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess) err = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (err != cudaSuccess) {
    *why = std::string("querying the device: ") + cudaGetErrorString(err);
    return Status::cuda_error;
  }
  // The pool: what the budget pays for, no more than the sequences can use,
  // and at most half the free memory (the caller's buffers live there too).
  const int64_t data_bytes = layout_of(c).block_elems() * element_bytes(format);
  int64_t blocks = BlockTable::pool_blocks(c.memory_budget, block_bytes(c, format), c.max_sequences, c.max_tokens);
  blocks = std::min<int64_t>(blocks, static_cast<int64_t>(free_bytes / 2) / data_bytes);

  std::unique_ptr<PagedCache> made(new PagedCache(c, format, blocks, sm_count));
  if (blocks > 0) err = cudaMalloc(&made->pool_, static_cast<size_t>(blocks * data_bytes));
  if (err == cudaSuccess)
    err = cudaMalloc(reinterpret_cast<void**>(&made->device_table_), static_cast<size_t>(table_bytes));
  if (err != cudaSuccess) {
    *why = std::string("allocating the block pool: ") + cudaGetErrorString(err);
    return Status::cuda_error;
  }
  *cache = std::move(made);
  return Status::ok;
}

PagedCache::PagedCache(const CacheConfig& config, Format format, int64_t pool_blocks, int sm_count)
    : config_(config),
      format_(format),
      layout_(layout_of(config)),
      table_stride_(table_stride(config)),
      table_(config.layers, config.max_sequences, config.max_tokens, block_bytes(config, format), pool_blocks),
      sm_count_(sm_count) {}

PagedCache::~PagedCache() {
  // cudaFree waits for work still queued on these buffers; errors here have
  // nowhere to go.
  for (void* p : {pool_, static_cast<void*>(device_table_), work_, partials_})
    if (p != nullptr) cudaFree(p);
}

Status PagedCache::fail_cuda(const char* what, cudaError_t err, std::string* why) const {
  *why = std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  return Status::cuda_error;
}

cudaError_t PagedCache::reserve(void** buffer, int64_t* capacity, int64_t bytes) {
  if (bytes <= *capacity) return cudaSuccess;
  const int64_t old_capacity = *capacity;
  if (*buffer != nullptr) {
    const cudaError_t err = cudaFree(*buffer);
    *buffer = nullptr;
    *capacity = 0;
    if (err != cudaSuccess) return err;
  }
  const int64_t rounded = std::max<int64_t>(bytes, 2 * old_capacity);
  const cudaError_t err = cudaMalloc(buffer, static_cast<size_t>(rounded));
  if (err != cudaSuccess) {
    *buffer = nullptr;
    return err;
  }
  *capacity = rounded;
  return cudaSuccess;
}

Status PagedCache::append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                          cudaStream_t stream, std::string* why) {
  BlockTable::Grant grant;
  switch (table_.grow(layer, sequence, n, &grant, why)) {
    case BlockTable::Status::ok: break;
    case BlockTable::Status::out_of_memory: return Status::out_of_memory;
    case BlockTable::Status::invalid: return Status::invalid;
  }
  const Sequence& s = *grant.sequence;
  int32_t* row = device_table_ + static_cast<int64_t>(s.slot) * table_stride_;
  const size_t added = s.blocks.size() - grant.first_new_block;
  if (added > 0) {
    // From pageable memory: the call returns once the ids are staged, so the
    // host vector may change afterwards.
    const cudaError_t err = cudaMemcpyAsync(row + grant.first_new_block, s.blocks.data() + grant.first_new_block,
                                            added * sizeof(int32_t), cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) return fail_cuda("uploading block ids", err, why);
  }
  AppendLaunch a{pool_, row, k, v, layout_, grant.first_position, n, layer};
  const cudaError_t err = launch_append(format_, a, sm_count_, stream);
  if (err != cudaSuccess) return fail_cuda("append kernel", err, why);
  return Status::ok;
}

Status PagedCache::attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                          const float* q, float* out, cudaStream_t stream, std::string* why) {
  entries_.resize(static_cast<size_t>(batch));
  int64_t rows = 0;
  for (int32_t b = 0; b < batch; ++b) {
    const Sequence* s = table_.find(sequences[b]);
    if (s == nullptr) {
      *why = "attend: sequence " + std::to_string(sequences[b]) + " is not live";
      return Status::invalid;
    }
    const int64_t tokens = s->tokens[static_cast<size_t>(layer)];
    if (query_lengths[b] > tokens) {
      *why = "attend: sequence " + std::to_string(sequences[b]) + " holds " + std::to_string(tokens) +
             " tokens in layer " + std::to_string(layer) + ", fewer than its queries";
      return Status::invalid;
    }
    entries_[static_cast<size_t>(b)] = PlanEntry{s->slot, tokens, query_lengths[b]};
    rows += query_lengths[b];
  }
  if (rows > INT32_MAX / 2) {
    *why = "attend: too many query rows";
    return Status::unsupported;
  }
  const int64_t group = config_.query_heads / config_.kv_heads;
  const int64_t kv_units = config_.kv_heads * (group / group_tile(format_, group));
  make_plan(entries_.data(), batch, kv_units, kBlocksPerSm * sm_count_, kMinSplitKeys, &plan_);

  const size_t item_bytes = plan_.items.size() * sizeof(WorkItem);
  const size_t merge_bytes = plan_.merges.size() * sizeof(MergeGroup);
  const size_t bytes = item_bytes + merge_bytes;
  const int64_t old_capacity = work_capacity_;
  cudaError_t err = reserve(&work_, &work_capacity_, static_cast<int64_t>(bytes));
  if (err != cudaSuccess) return fail_cuda("allocating the work plan", err, why);
  if (work_capacity_ != old_capacity) uploaded_.clear();
  // As bytes; std::equal and std::copy, since an empty vector's data() may
  // be null, which memcmp and memcpy may not be given even for no bytes.
  const char* items = reinterpret_cast<const char*>(plan_.items.data());
  const char* merges = reinterpret_cast<const char*>(plan_.merges.data());
  const bool same = stream == uploaded_on_ && uploaded_.size() == bytes &&
                    std::equal(items, items + item_bytes, uploaded_.data()) &&
                    std::equal(merges, merges + merge_bytes, uploaded_.data() + item_bytes);
  if (!same) {
    uploaded_.resize(bytes);
    std::copy(items, items + item_bytes, uploaded_.data());
    std::copy(merges, merges + merge_bytes, uploaded_.data() + item_bytes);
    err = cudaMemcpyAsync(work_, uploaded_.data(), bytes, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) {
      uploaded_.clear();
      return fail_cuda("uploading the work plan", err, why);
    }
    uploaded_on_ = stream;
  }
  err = reserve(&partials_, &partials_capacity_,
                partial_bytes(format_, plan_.partials, config_.query_heads, config_.head_dim));
  if (err != cudaSuccess) return fail_cuda("allocating partial states", err, why);

  AttendLaunch a;
  a.pool = pool_;
  a.table = device_table_;
  a.table_stride = table_stride_;
  a.items = static_cast<const WorkItem*>(work_);
  a.n_items = static_cast<int64_t>(plan_.items.size());
  a.merges = reinterpret_cast<const MergeGroup*>(static_cast<const char*>(work_) + item_bytes);
  a.n_merges = static_cast<int64_t>(plan_.merges.size());
  a.q = q;
  a.out = out;
  a.partials = partials_;
  a.n_partials = plan_.partials;
  a.layout = layout_;
  a.layer = layer;
  a.query_heads = static_cast<int32_t>(config_.query_heads);
  err = launch_attend(format_, a, stream);
  if (err != cudaSuccess) return fail_cuda("attention kernels", err, why);
  return Status::ok;
}

}  // namespace kvcache::cuda
