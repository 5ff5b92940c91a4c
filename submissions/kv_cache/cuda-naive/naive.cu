// Naive CUDA KV cache: the baseline the paged CUDA cache is measured against.
//
// Memory: each live sequence owns a device slot reserved (cudaMalloc) at its
// first append for max_tokens positions of every layer:
//   slot [layers, 2 (K, V), max_tokens, kv_heads, head_dim] float32
// An append is a device-to-device copy into the slot. A new sequence is
// refused (OUT_OF_MEMORY) when one more slot would pass the budget; a release
// frees the slot. bytes_in_use = live slots * slot bytes.
//
// Attention: one thread block per (query row, query head), no split: the
// scores of all visible keys are materialised in a device scratch buffer (in
// double), then their max, the exp sum, and the weighted sum of V, each a
// pass over the keys. Every query head reads its kv head's K and V again.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../common/cuda_support.h"
#include "abi_support.h"

namespace {

constexpr int kThreads = 128;
// Scores materialised per launch at most (rows are launched in chunks).
constexpr int64_t kScratchBytes = int64_t{256} << 20;

using submission_abi::cuda_fail;
using submission_abi::grow_device_buffer;

struct RowInfo {
  const float* k;  // the layer's K in the slot: [max_tokens, kv_heads, head_dim]; V follows one plane later
  int64_t visible;
};

__device__ double block_reduce(double v, bool is_max, double* shared) {
  for (int o = 16; o > 0; o /= 2) {
    const double other = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmax(v, other) : v + other;
  }
  __syncthreads();
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  double total = shared[0];
  for (int w = 1; w < kThreads / 32; ++w) total = is_max ? fmax(total, shared[w]) : total + shared[w];
  return total;
}

// Grid (rows of this launch, query_heads).
__global__ void attend_kernel(const RowInfo* rows, int64_t first_row, const float* q, float* out, double* scratch,
                              int64_t scratch_stride, int64_t plane, int32_t query_heads, int32_t kv_heads,
                              int32_t head_dim, double scale) {
  __shared__ double shared[kThreads / 32];
  const RowInfo info = rows[blockIdx.x];
  const int h = static_cast<int>(blockIdx.y);
  const int64_t row = first_row + blockIdx.x;
  const int64_t kv = (h / (query_heads / kv_heads)) * static_cast<int64_t>(head_dim);
  const int64_t stride = static_cast<int64_t>(kv_heads) * head_dim;
  const float* qh = q + (row * query_heads + h) * head_dim;
  double* s = scratch + (static_cast<int64_t>(blockIdx.x) * query_heads + h) * scratch_stride;

  double local_max = -INFINITY;
  for (int64_t t = threadIdx.x; t < info.visible; t += kThreads) {
    double dot = 0.0;
    for (int x = 0; x < head_dim; ++x) dot += static_cast<double>(qh[x]) * info.k[t * stride + kv + x];
    s[t] = dot * scale;
    local_max = fmax(local_max, s[t]);
  }
  const double max = block_reduce(local_max, true, shared);
  double local_sum = 0.0;
  for (int64_t t = threadIdx.x; t < info.visible; t += kThreads) {
    s[t] = exp(s[t] - max);
    local_sum += s[t];
  }
  const double sum = block_reduce(local_sum, false, shared);
  const float* v = info.k + plane;
  for (int x = threadIdx.x; x < head_dim; x += kThreads) {
    double acc = 0.0;
    for (int64_t t = 0; t < info.visible; ++t) acc += s[t] * v[t * stride + kv + x];
    out[(row * query_heads + h) * head_dim + x] = static_cast<float>(acc / sum);
  }
}

class NaiveCache final : public kv_abi::Cache {
 public:
  explicit NaiveCache(const kv_cache_config& c)
      : c_(c), row_(int64_t{c.kv_heads} * c.head_dim), plane_(c.max_tokens * row_) {}

  ~NaiveCache() override {
    for (auto& s : slots_) cudaFree(s.second.data);
    for (void* p : {static_cast<void*>(rows_dev_), static_cast<void*>(scratch_)})
      if (p != nullptr) cudaFree(p);
  }

  int64_t slot_bytes() const { return int64_t{c_.layers} * 2 * plane_ * static_cast<int64_t>(sizeof(float)); }

  harness_status append(int32_t layer, int64_t sequence, int64_t n, const float* k, const float* v,
                        void* stream) override {
    auto it = slots_.find(sequence);
    if (it == slots_.end()) {
      const harness_status admitted = kv_abi::check_new_slot(layer, slots_.size(), slot_bytes(), c_);
      if (admitted != HARNESS_STATUS_OK) return admitted;
      Slot slot;
      const cudaError_t err = cudaMalloc(&slot.data, static_cast<size_t>(slot_bytes()));
      if (err != cudaSuccess) return cuda_fail("allocating a slot", err);
      slot.tokens.assign(static_cast<size_t>(c_.layers), 0);
      it = slots_.emplace(sequence, std::move(slot)).first;
    }
    Slot& s = it->second;
    int64_t& held = s.tokens[static_cast<size_t>(layer)];
    if (held + n > c_.max_tokens)
      return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "append: the sequence would pass max_tokens");
    float* kd = s.data + int64_t{layer} * 2 * plane_ + held * row_;
    const size_t bytes = static_cast<size_t>(n * row_) * sizeof(float);
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    cudaError_t err = cudaMemcpyAsync(kd, k, bytes, cudaMemcpyDeviceToDevice, st);
    if (err == cudaSuccess) err = cudaMemcpyAsync(kd + plane_, v, bytes, cudaMemcpyDeviceToDevice, st);
    if (err != cudaSuccess) return cuda_fail("append copy", err);
    held += n;
    return HARNESS_STATUS_OK;
  }

  harness_status attend(int32_t layer, int32_t batch, const int64_t* sequences, const int32_t* query_lengths,
                        const float* q, float* out, void* stream) override {
    rows_.clear();
    int64_t longest = 1;
    for (int32_t b = 0; b < batch; ++b) {
      const auto it = slots_.find(sequences[b]);
      if (it == slots_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: sequence not live");
      const int64_t tokens = it->second.tokens[static_cast<size_t>(layer)];
      if (query_lengths[b] > tokens) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "attend: too many queries");
      for (int64_t i = 0; i < query_lengths[b]; ++i)
        rows_.push_back(RowInfo{it->second.data + int64_t{layer} * 2 * plane_, tokens - query_lengths[b] + i + 1});
      longest = std::max<int64_t>(longest, tokens);
    }
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    const int64_t n_rows = static_cast<int64_t>(rows_.size());
    cudaError_t err =
        grow_device_buffer(reinterpret_cast<void**>(&rows_dev_), &rows_capacity_, n_rows * sizeof(RowInfo));
    if (err == cudaSuccess)
      err = cudaMemcpyAsync(rows_dev_, rows_.data(), n_rows * sizeof(RowInfo), cudaMemcpyHostToDevice, st);
    const int64_t per_row = int64_t{c_.query_heads} * longest * static_cast<int64_t>(sizeof(double));
    const int64_t chunk = std::max<int64_t>(1, std::min(n_rows, kScratchBytes / per_row));
    if (err == cudaSuccess)
      err = grow_device_buffer(reinterpret_cast<void**>(&scratch_), &scratch_capacity_, chunk * per_row);
    if (err != cudaSuccess) return cuda_fail("attend setup", err);
    const double scale = 1.0 / std::sqrt(static_cast<double>(c_.head_dim));
    for (int64_t first = 0; first < n_rows; first += chunk) {
      const dim3 grid(static_cast<unsigned>(std::min(chunk, n_rows - first)), static_cast<unsigned>(c_.query_heads));
      attend_kernel<<<grid, kThreads, 0, st>>>(rows_dev_ + first, first, q, out, scratch_, longest, plane_,
                                               c_.query_heads, c_.kv_heads, c_.head_dim, scale);
      err = cudaGetLastError();
      if (err != cudaSuccess) return cuda_fail("attend kernel", err);
    }
    return HARNESS_STATUS_OK;
  }

  harness_status release(int64_t sequence) override {
    const auto it = slots_.find(sequence);
    if (it == slots_.end()) return kv_abi::fail(HARNESS_STATUS_INVALID_ARGUMENT, "release: not live");
    // cudaFree waits for the device: no queued kernel still reads the slot.
    const cudaError_t err = cudaFree(it->second.data);
    slots_.erase(it);
    if (err != cudaSuccess) return cuda_fail("freeing a slot", err);
    return HARNESS_STATUS_OK;
  }

  int64_t bytes_in_use() const override { return static_cast<int64_t>(slots_.size()) * slot_bytes(); }

 private:
  struct Slot {
    float* data = nullptr;        // device [layers, 2, max_tokens, kv_heads, head_dim]
    std::vector<int64_t> tokens;  // [layers]
  };

  kv_cache_config c_;
  int64_t row_, plane_;
  std::unordered_map<int64_t, Slot> slots_;
  std::vector<RowInfo> rows_;
  RowInfo* rows_dev_ = nullptr;
  int64_t rows_capacity_ = 0;
  double* scratch_ = nullptr;
  int64_t scratch_capacity_ = 0;
};

harness_status create(const kv_cache_config& config, std::unique_ptr<kv_abi::Cache>* cache) {
  const harness_status limits = kv_abi::check_cuda_kernel_limits(config);
  if (limits != HARNESS_STATUS_OK) return limits;
  cache->reset(new NaiveCache(config));
  return HARNESS_STATUS_OK;
}

}  // namespace

KV_CACHE_EXPORT_ABI(KV_CACHE_FORMAT_FP32, create)
