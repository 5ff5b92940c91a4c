// A plausible mid-level CUDA paged KV cache, the common source of the CUDA
// mutants. Each mutant's submission.json defines one MUTANT_* macro that
// switches on one realistic bug; with none defined the implementation is
// correct (it is never shipped that way: cuda-fast and cuda-naive are). The
// exploit cuda-work-in-download wraps it (EXPLOIT_WORK_IN_DOWNLOAD).
//
// Design: a device pool of blocks of kBlock tokens ([layers, 2, kBlock,
// kv_heads, head_dim] fp32) allocated at create within the budget, block
// tables on the host mirrored into a device table at append. Attention is
// always split-K: every query row's visible keys are cut into chunks of
// kChunk; a thread block per (chunk, query head), a thread per dimension,
// writes the chunk's partial softmax state (m, l, unnormalised acc), and a
// merge kernel combines the chunks of each row.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../common/cuda_support.h"
#include "abi_support.h"
#ifdef EXPLOIT_WORK_IN_DOWNLOAD
#include "work_in_download.cuh"  // exploits/cuda-work-in-download
#endif

namespace {

constexpr int64_t kBlock = 16;
constexpr int64_t kChunk = 64;

using submission_abi::cuda_fail;
using submission_abi::grow_device_buffer;

struct Chunk {
  int32_t table_row, q_row;
  int32_t key_begin, key_end;
};

struct Geometry {
  int64_t block_elems, row;  // row = kv_heads * head_dim
  int32_t layer, query_heads, kv_heads, head_dim;
  int64_t table_stride;
};

__global__ void append_kernel(float* pool, const int32_t* blocks, const float* k, const float* v, Geometry g,
                              int64_t first, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n * g.row;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pos = first + i / g.row;
    float* dst = pool + blocks[pos / kBlock] * g.block_elems + (int64_t{g.layer} * 2 * kBlock + pos % kBlock) * g.row;
    dst[i % g.row] = k[i];
    dst[kBlock * g.row + i % g.row] = v[i];
  }
}

// Grid (chunks, query_heads), head_dim threads.
__global__ void chunk_kernel(const float* pool, const int32_t* table, const Chunk* chunks, const float* q, Geometry g,
                             double scale, float* acc_out, double* m_out, double* l_out) {
  extern __shared__ double partial[];  // [head_dim]
  const Chunk c = chunks[blockIdx.x];
  const int h = static_cast<int>(blockIdx.y), x = static_cast<int>(threadIdx.x);
  const int64_t kv = (h / (g.query_heads / g.kv_heads)) * int64_t{g.head_dim};
  const float qx = q[(int64_t{c.q_row} * g.query_heads + h) * g.head_dim + x];
  const int32_t* blocks = table + c.table_row * g.table_stride;
  double m = -INFINITY, l = 0.0, acc = 0.0;
  for (int32_t t = c.key_begin; t < c.key_end; ++t) {
    const float* kt = pool + blocks[t / kBlock] * g.block_elems + (int64_t{g.layer} * 2 * kBlock + t % kBlock) * g.row;
    partial[x] = static_cast<double>(qx) * kt[kv + x];
    __syncthreads();
    for (int stride = g.head_dim / 2; stride > 0; stride /= 2) {
      if (x < stride) partial[x] += partial[x + stride];
      __syncthreads();
    }
    const double s = partial[0] * scale;
    __syncthreads();
    const double new_m = fmax(m, s);
    const double alpha = exp(m - new_m), p = exp(s - new_m);
    l = l * alpha + p;
    acc = acc * alpha + p * kt[kBlock * g.row + kv + x];
    m = new_m;
  }
  const int64_t slot = int64_t{blockIdx.x} * g.query_heads + h;
  acc_out[slot * g.head_dim + x] = static_cast<float>(acc);
  if (x == 0) {
    m_out[slot] = m;
    l_out[slot] = l;
  }
}

// Grid (rows, query_heads), head_dim threads; the chunks of a row are consecutive.
__global__ void merge_kernel(const int32_t* first_chunk, const float* acc, const double* m, const double* l, float* out,
                             int32_t query_heads, int32_t head_dim) {
  const int64_t row = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y), x = static_cast<int>(threadIdx.x);
  const int32_t begin = first_chunk[row], end = first_chunk[row + 1];
  double big = -INFINITY;
  for (int32_t c = begin; c < end; ++c) big = fmax(big, m[int64_t{c} * query_heads + h]);
  double sum = 0.0, total = 0.0;
  for (int32_t c = begin; c < end; ++c) {
    const int64_t slot = int64_t{c} * query_heads + h;
#ifdef MUTANT_SPLIT_MERGE_WITHOUT_RESCALE
    // Bug: the chunks' sums are added as they are, each still relative to
    // its own max m_c instead of being rescaled by exp(m_c - max) first.
    const double w = 1.0;
    (void)big;
#else
    const double w = exp(m[slot] - big);
#endif
    sum += w * l[slot];
    total += w * acc[slot * head_dim + x];
  }
  out[(row * query_heads + h) * head_dim + x] = static_cast<float>(total / sum);
}

class MutableCache final : public kv_abi::Cache {
 public:
  MutableCache(const kv_cache_config& c, int64_t pool_blocks) : c_(c), pool_blocks_(pool_blocks) {
    g_.row = int64_t{c.kv_heads} * c.head_dim;
    g_.block_elems = int64_t{c.layers} * 2 * kBlock * g_.row;
    g_.query_heads = c.query_heads;
    g_.kv_heads = c.kv_heads;
    g_.head_dim = c.head_dim;
    g_.table_stride = (c.max_tokens + kBlock - 1) / kBlock;
  }

  ~MutableCache() override {
    for (void* p : {static_cast<void*>(pool_), static_cast<void*>(table_), work_, partials_})
      if (p != nullptr) cudaFree(p);
  }

  cudaError_t allocate() {
    cudaError_t err = cudaSuccess;
    if (pool_blocks_ > 0) err = cudaMalloc(&pool_, static_cast<size_t>(pool_blocks_ * g_.block_elems) * sizeof(float));
    if (err == cudaSuccess)
      err = cudaMalloc(&table_, static_cast<size_t>(c_.max_sequences * g_.table_stride) * sizeof(int32_t));
    return err;
  }

  harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                        void* stream) override {
    auto it = sequences_.find(sequence);
    if (it == sequences_.end()) {
      const harness_status admitted = kv_abi::check_new_sequence(layer, sequences_.size(), c_);
      if (admitted != HARNESS_STATUS_OK) return admitted;
    }
    const int64_t held = it == sequences_.end() ? 0 : it->second.tokens[static_cast<size_t>(layer)];
    if (held + n > c_.max_tokens) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "append: past max_tokens");
    const int64_t owned = it == sequences_.end() ? 0 : static_cast<int64_t>(it->second.blocks.size());
    const int64_t needed = std::max<int64_t>(0, (held + n + kBlock - 1) / kBlock - owned);
    if (needed > static_cast<int64_t>(free_.size()) + pool_blocks_ - fresh_)
      return kv_abi::fail(HARNESS_STATUS_OUT_OF_MEMORY, "append: the pool is full");
    if (it == sequences_.end()) {
      Sequence s;
      s.tokens.assign(static_cast<size_t>(c_.layers), 0);
      s.row = static_cast<int32_t>(free_rows_.empty() ? next_row_++ : free_rows_.back());
      if (!free_rows_.empty()) free_rows_.pop_back();
      it = sequences_.emplace(sequence, std::move(s)).first;
    }
    Sequence& s = it->second;
    for (int64_t b = 0; b < needed; ++b) {
      if (!free_.empty()) {
        s.blocks.push_back(free_.back());
        free_.pop_back();
      } else {
        s.blocks.push_back(static_cast<int32_t>(fresh_++));
      }
    }
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    int32_t* row = table_ + s.row * g_.table_stride;
    cudaError_t err = cudaSuccess;
    if (needed > 0)
      err = cudaMemcpyAsync(row + owned, s.blocks.data() + owned, static_cast<size_t>(needed) * sizeof(int32_t),
                            cudaMemcpyHostToDevice, st);
    if (err != cudaSuccess) return cuda_fail("block table upload", err);
    Geometry g = g_;
    g.layer = layer;
    append_kernel<<<static_cast<unsigned>(std::min<int64_t>((n * g.row + 255) / 256, 1024)), 256, 0, st>>>(
        pool_, row, k, v, g, held, n);
    err = cudaGetLastError();
    if (err != cudaSuccess) return cuda_fail("append kernel", err);
    s.tokens[static_cast<size_t>(layer)] = held + n;
    return HARNESS_STATUS_OK;
  }

  harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, void* stream) override {
    chunks_.clear();
    first_chunk_.clear();
    int32_t q_row = 0;
    for (int32_t b = 0; b < batch; ++b) {
      const auto it = sequences_.find(sequences[b]);
      if (it == sequences_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: sequence not live");
      const int64_t tokens = it->second.tokens[static_cast<size_t>(layer)];
      if (query_lengths[b] > tokens) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: too many queries");
      for (int64_t i = 0; i < query_lengths[b]; ++i, ++q_row) {
        const int64_t pos = tokens - query_lengths[b] + i;
#ifdef MUTANT_NEWEST_TOKEN_SKIPPED
        const int64_t visible = pos;  // Bug: "keys before the query": its own key is left out.
#else
        const int64_t visible = pos + 1;
#endif
        first_chunk_.push_back(static_cast<int32_t>(chunks_.size()));
        for (int64_t k0 = 0; k0 < visible; k0 += kChunk)
          chunks_.push_back(Chunk{it->second.row, q_row, static_cast<int32_t>(k0),
                                  static_cast<int32_t>(std::min(visible, k0 + kChunk))});
      }
    }
    first_chunk_.push_back(static_cast<int32_t>(chunks_.size()));
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    const size_t chunk_bytes = chunks_.size() * sizeof(Chunk), first_bytes = first_chunk_.size() * sizeof(int32_t);
    const int64_t n_chunks = static_cast<int64_t>(chunks_.size());
    const int64_t slots = n_chunks * c_.query_heads;
    cudaError_t err = grow_device_buffer(&work_, &work_capacity_, static_cast<int64_t>(chunk_bytes + first_bytes));
    if (err == cudaSuccess) err = grow_device_buffer(&partials_, &partials_capacity_, slots * (c_.head_dim * 4 + 16));
    if (err == cudaSuccess && chunk_bytes > 0)
      err = cudaMemcpyAsync(work_, chunks_.data(), chunk_bytes, cudaMemcpyHostToDevice, st);
    if (err == cudaSuccess)
      err = cudaMemcpyAsync(static_cast<char*>(work_) + chunk_bytes, first_chunk_.data(), first_bytes,
                            cudaMemcpyHostToDevice, st);
    if (err != cudaSuccess) return cuda_fail("attend setup", err);
    float* acc = static_cast<float*>(partials_);
    double* m = reinterpret_cast<double*>(acc + slots * c_.head_dim);
    double* l = m + slots;
    Geometry g = g_;
    g.layer = layer;
    const unsigned threads = static_cast<unsigned>(c_.head_dim);
    if (n_chunks > 0)
      chunk_kernel<<<dim3(static_cast<unsigned>(n_chunks), static_cast<unsigned>(c_.query_heads)), threads,
                     threads * sizeof(double), st>>>(pool_, table_, static_cast<const Chunk*>(work_), q, g,
                                                     1.0 / std::sqrt(static_cast<double>(c_.head_dim)), acc, m, l);
    merge_kernel<<<dim3(static_cast<unsigned>(q_row), static_cast<unsigned>(c_.query_heads)), threads, 0, st>>>(
        reinterpret_cast<const int32_t*>(static_cast<char*>(work_) + chunk_bytes), acc, m, l, out, c_.query_heads,
        c_.head_dim);
    err = cudaGetLastError();
    if (err != cudaSuccess) return cuda_fail("attend kernels", err);
    return HARNESS_STATUS_OK;
  }

  harness_status release(int64_t sequence) override {
    const auto it = sequences_.find(sequence);
    if (it == sequences_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "release: not live");
    for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b) free_.push_back(*b);
    free_rows_.push_back(it->second.row);
    sequences_.erase(it);
    return HARNESS_STATUS_OK;
  }

  int64_t bytes_in_use() const override {
    return (fresh_ - static_cast<int64_t>(free_.size())) * g_.block_elems * static_cast<int64_t>(sizeof(float));
  }

 private:
  struct Sequence {
    int32_t row = 0;  // of the device block table
    std::vector<int32_t> blocks;
    std::vector<int64_t> tokens;  // [layers]
  };

  kv_cache_config c_;
  int64_t pool_blocks_;
  Geometry g_{};
  float* pool_ = nullptr;
  int32_t* table_ = nullptr;
  void* work_ = nullptr;
  int64_t work_capacity_ = 0;
  void* partials_ = nullptr;
  int64_t partials_capacity_ = 0;
  std::vector<int32_t> free_, free_rows_;
  int64_t fresh_ = 0, next_row_ = 0;
  std::unordered_map<int64_t, Sequence> sequences_;
  std::vector<Chunk> chunks_;
  std::vector<int32_t> first_chunk_;
};

harness_status create(const kv_cache_config& c, std::unique_ptr<kv_abi::Cache>* cache) {
  if (c.head_dim > 1024 || (c.head_dim & (c.head_dim - 1)) != 0)
    return kv_abi::fail(HARNESS_STATUS_UNSUPPORTED, "head_dim must be a power of two <= 1024");
  // Also bounds max_sequences x the table stride well inside int64.
  const harness_status limits = kv_abi::check_cuda_kernel_limits(c);
  if (limits != HARNESS_STATUS_OK) return limits;
  const int64_t block_bytes = int64_t{c.layers} * 2 * kBlock * c.kv_heads * c.head_dim * 4;
  size_t free_bytes = 0, total_bytes = 0;
  const cudaError_t info = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (info != cudaSuccess) return cuda_fail("cudaMemGetInfo", info);
  const int64_t needed = c.max_sequences * ((c.max_tokens + kBlock - 1) / kBlock);
  const int64_t blocks =
      std::min({c.memory_budget / block_bytes, needed, static_cast<int64_t>(free_bytes / 2) / block_bytes});
  std::unique_ptr<MutableCache> made(new MutableCache(c, blocks));
  const cudaError_t err = made->allocate();
  if (err != cudaSuccess) return cuda_fail("allocating the pool", err);
#ifdef EXPLOIT_WORK_IN_DOWNLOAD
  *cache = std::make_unique<work_in_download::Cache>(std::move(made));
#else
  *cache = std::move(made);
#endif
  return HARNESS_STATUS_OK;
}

}  // namespace

KV_CACHE_EXPORT_ABI(KV_CACHE_FORMAT_FP32, create)
