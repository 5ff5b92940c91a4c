// Naive CUDA attention: the baseline the fast kernels are measured against.
// A warp per output row, no shared memory, no tiles, no scratch; every score
// is recomputed where it is needed (a dot product of two rows, reduced over
// the warp):
//   forward:  a warp per query row: pass 1 finds the row's max score, pass 2
//             sums exp(s - max) and the weighted rows of v;
//   backward: a warp per query row writes dq (D = dout . o, then its keys);
//             a warp per key row writes dk and dv, looping over the group's
//             query heads and every query that sees the key (D recomputed).
// Each lane keeps dims lane, lane + 32, ... of a row in registers: dim <= 256.
// Float32 throughout, like the harness's float32 inputs.
#include <cuda_runtime.h>

#include "abi_support.h"
#include "cuda_support.h"

namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kPerLane = 8;
constexpr int64_t kMaxDim = 32 * kPerLane;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops take the rest

struct Dims {
  int64_t heads_q, heads_kv, group, n_q, n_kv, dim;
  float scale;
  bool causal;
};

__device__ float warp_sum(float x) {
  for (int m = 16; m > 0; m /= 2) x += __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}

__device__ int lane_id() { return static_cast<int>(threadIdx.x % 32); }

// The first warp of this block's share of a grid-stride loop over rows, and the stride.
__device__ int64_t first_row() { return blockIdx.x * int64_t{kWarpsPerBlock} + threadIdx.x / 32; }
__device__ int64_t row_stride() { return gridDim.x * int64_t{kWarpsPerBlock}; }

// Elements lane + 32 t of a row, 0 past dim.
__device__ void load_row(const float* row, int64_t dim, float (&out)[kPerLane]) {
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane_id() + 32 * t;
    out[t] = d < dim ? row[d] : 0.0f;
  }
}

// a . row over the warp (a as load_row holds it); every lane gets the sum.
__device__ float dot(const float (&a)[kPerLane], const float* row, int64_t dim) {
  float sum = 0.0f;
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane_id() + 32 * t;
    if (d < dim) sum += a[t] * row[d];
  }
  return warp_sum(sum);
}

// acc += w * row, elementwise.
__device__ void add_scaled(float (&acc)[kPerLane], float w, const float* row, int64_t dim) {
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane_id() + 32 * t;
    if (d < dim) acc[t] += w * row[d];
  }
}

__device__ void store_row(const float (&acc)[kPerLane], float factor, int64_t dim, float* row) {
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t d = lane_id() + 32 * t;
    if (d < dim) row[d] = acc[t] * factor;
  }
}

// Query i sees keys [0, visible_keys): all of them, or under the causal
// mask those up to i + n_kv - n_q.
__device__ int64_t visible_keys(const Dims& s, int64_t i) {
  if (!s.causal) return s.n_kv;
  const int64_t last = i + s.n_kv - s.n_q;
  return last < 0 ? 0 : last + 1 < s.n_kv ? last + 1 : s.n_kv;
}

// Row bh * n_q + i of the query-side tensors -> first row of its kv head's keys.
__device__ int64_t kv_head_row(const Dims& s, int64_t query_row) {
  const int64_t bh = query_row / s.n_q;
  return (bh / s.heads_q * s.heads_kv + bh % s.heads_q / s.group) * s.n_kv;
}

__global__ void forward_kernel(const float* q, const float* k, const float* v, Dims s, int64_t rows, float* o,
                               float* lse) {
  for (int64_t row = first_row(); row < rows; row += row_stride()) {
    const float* kh = k + kv_head_row(s, row) * s.dim;
    const float* vh = v + kv_head_row(s, row) * s.dim;
    const int64_t keys = visible_keys(s, row % s.n_q);
    float qr[kPerLane], acc[kPerLane] = {};
    load_row(q + row * s.dim, s.dim, qr);
    float m = -INFINITY;
    for (int64_t j = 0; j < keys; ++j) m = fmaxf(m, s.scale * dot(qr, kh + j * s.dim, s.dim));
    float l = 0.0f;
    for (int64_t j = 0; j < keys; ++j) {
      const float p = expf(s.scale * dot(qr, kh + j * s.dim, s.dim) - m);
      l += p;
      add_scaled(acc, p, vh + j * s.dim, s.dim);
    }
    // A query that sees no key: o = 0, lse = -inf.
    store_row(acc, keys > 0 ? 1.0f / l : 0.0f, s.dim, o + row * s.dim);
    if (lane_id() == 0) lse[row] = keys > 0 ? m + logf(l) : -INFINITY;
  }
}

// dq[i] = scale * sum_j p_ij (dout_i . v_j - D_i) k_j, p_ij = exp(s_ij - lse_i), D_i = dout_i . o_i.
__global__ void dq_kernel(const float* q, const float* k, const float* v, const float* o, const float* lse,
                          const float* dout, Dims s, int64_t rows, float* dq) {
  for (int64_t row = first_row(); row < rows; row += row_stride()) {
    const float* kh = k + kv_head_row(s, row) * s.dim;
    const float* vh = v + kv_head_row(s, row) * s.dim;
    const int64_t keys = visible_keys(s, row % s.n_q);  // 0 for a row with lse = -inf
    float qr[kPerLane], dr[kPerLane], acc[kPerLane] = {};
    load_row(q + row * s.dim, s.dim, qr);
    load_row(dout + row * s.dim, s.dim, dr);
    const float d_i = dot(dr, o + row * s.dim, s.dim);
    for (int64_t j = 0; j < keys; ++j) {
      const float p = expf(s.scale * dot(qr, kh + j * s.dim, s.dim) - lse[row]);
      add_scaled(acc, p * (dot(dr, vh + j * s.dim, s.dim) - d_i), kh + j * s.dim, s.dim);
    }
    store_row(acc, s.scale, s.dim, dq + row * s.dim);
  }
}

// For key row j of kv head g, over the query heads h of g and the queries i that see j:
//   dv[j] = sum p_ij dout_i,  dk[j] = scale * sum p_ij (dout_i . v_j - D_i) q_i.
__global__ void dkv_kernel(const float* q, const float* k, const float* v, const float* o, const float* lse,
                           const float* dout, Dims s, int64_t kv_rows, float* dk, float* dv) {
  for (int64_t row = first_row(); row < kv_rows; row += row_stride()) {
    const int64_t j = row % s.n_kv, bkv = row / s.n_kv;
    const int64_t first_head = bkv / s.heads_kv * s.heads_q + bkv % s.heads_kv * s.group;
    // Query i sees key j when j <= i + n_kv - n_q.
    const int64_t first_query = s.causal && j - s.n_kv + s.n_q > 0 ? j - s.n_kv + s.n_q : 0;
    float kr[kPerLane], vr[kPerLane], acc_k[kPerLane] = {}, acc_v[kPerLane] = {};
    load_row(k + row * s.dim, s.dim, kr);
    load_row(v + row * s.dim, s.dim, vr);
    for (int64_t h = first_head; h < first_head + s.group; ++h) {
      for (int64_t i = first_query; i < s.n_q; ++i) {
        const int64_t qrow = h * s.n_q + i;
        const float* qi = q + qrow * s.dim;
        const float* di = dout + qrow * s.dim;
        float dr[kPerLane];
        load_row(di, s.dim, dr);
        const float p = expf(s.scale * dot(kr, qi, s.dim) - lse[qrow]);
        const float ds = p * (dot(vr, di, s.dim) - dot(dr, o + qrow * s.dim, s.dim));
        add_scaled(acc_v, p, di, s.dim);
        add_scaled(acc_k, ds, qi, s.dim);
      }
    }
    store_row(acc_k, s.scale, s.dim, dk + row * s.dim);
    store_row(acc_v, 1.0f, s.dim, dv + row * s.dim);
  }
}

unsigned blocks_for(int64_t rows) {
  const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

harness_status launched(const char* what) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? HARNESS_STATUS_OK : attention_abi::cuda_fail(what, err);
}

Dims dims_of(int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv, int64_t dim, float scale, int32_t causal) {
  return Dims{heads_q, heads_kv, heads_q / heads_kv, n_q, n_kv, dim, scale, causal != 0};
}

harness_status forward(const float* q, const float* k, const float* v, int64_t batch, int64_t heads_q, int64_t heads_kv,
                       int64_t n_q, int64_t n_kv, int64_t dim, float scale, int32_t causal, float* o, float* lse,
                       void* stream) {
  if (dim > kMaxDim) return attention_abi::fail(HARNESS_STATUS_UNSUPPORTED, "cuda-naive handles dim <= 256");
  const int64_t rows = batch * heads_q * n_q;
  forward_kernel<<<blocks_for(rows), 32 * kWarpsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      q, k, v, dims_of(heads_q, heads_kv, n_q, n_kv, dim, scale, causal), rows, o, lse);
  return launched("forward_kernel");
}

harness_status backward(const float* q, const float* k, const float* v, const float* o, const float* lse,
                        const float* dout, int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv,
                        int64_t dim, float scale, int32_t causal, float* dq, float* dk, float* dv, void* stream) {
  if (dim > kMaxDim) return attention_abi::fail(HARNESS_STATUS_UNSUPPORTED, "cuda-naive handles dim <= 256");
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const Dims d = dims_of(heads_q, heads_kv, n_q, n_kv, dim, scale, causal);
  const int64_t rows = batch * heads_q * n_q, kv_rows = batch * heads_kv * n_kv;
  dq_kernel<<<blocks_for(rows), 32 * kWarpsPerBlock, 0, s>>>(q, k, v, o, lse, dout, d, rows, dq);
  const harness_status status = launched("dq_kernel");
  if (status != HARNESS_STATUS_OK) return status;
  dkv_kernel<<<blocks_for(kv_rows), 32 * kWarpsPerBlock, 0, s>>>(q, k, v, o, lse, dout, d, kv_rows, dk, dv);
  return launched("dkv_kernel");
}

}  // namespace

ATTENTION_EXPORT_ABI(forward, backward)
