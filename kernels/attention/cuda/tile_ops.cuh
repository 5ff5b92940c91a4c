// Device helpers of the attention kernels: the thread layout, tile loads
// into shared memory, the two tile products and the row reductions.
//
// Every kernel runs 256 threads as a 16 x 16 grid: ty = threadIdx.x / 16
// owns rows ty + 16 i of a tile of scores and outputs, tx = threadIdx.x % 16
// owns score columns tx + 16 c and output column pairs 32 k + 2 tx + {0, 1}.
// The 16 threads of one ty form a half-warp, so a row's reductions are four
// shuffles inside it. Tiles of width DP (dim padded to a multiple of 32) hold
// zeros past dim, which add nothing to any product.
#ifndef ATTENTION_CUDA_TILE_OPS_CUH
#define ATTENTION_CUDA_TILE_OPS_CUH

#include <cstdint>

namespace attention::cuda::detail {

constexpr int kThreads = 256;
constexpr int kSide = 16;
constexpr unsigned kFullMask = 0xffffffffu;

// Row stride (floats) of a tile of `width` columns in shared memory. With
// width a multiple of 32, a row is an odd number of float4s: the 8 threads
// of a quarter-warp reading a float4 each from rows tx, tx + 1, ... hit
// distinct banks.
__host__ __device__ constexpr int tile_stride(int width) { return width + 4; }

// The block's dynamic shared memory; float4 for 16-byte alignment.
__device__ __forceinline__ float* shared_floats() {
#ifdef WARP_EMULATION  // built for the host's warp emulator (tests/support/warp_emulation)
  return static_cast<float*>(warp_emulation::dynamic_shared());
#else
  extern __shared__ float4 attention_shared[];
  return reinterpret_cast<float*>(attention_shared);
#endif
}

__device__ __forceinline__ float half_warp_max(float x) {
  for (int m = kSide / 2; m > 0; m /= 2) x = fmaxf(x, __shfl_xor_sync(kFullMask, x, m));
  return x;
}

__device__ __forceinline__ float half_warp_sum(float x) {
  for (int m = kSide / 2; m > 0; m /= 2) x += __shfl_xor_sync(kFullMask, x, m);
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int m = 16; m > 0; m /= 2) x += __shfl_xor_sync(kFullMask, x, m);
  return x;
}

__device__ __forceinline__ float component(const float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

// Rows [row0, row0 + ROWS) of a row-major [n, dim] matrix into the tile
// [ROWS][STRIDE], zero past row n and column dim, by a block of THREADS
// threads. vec4: dim % 4 == 0 and src 16-byte aligned. Coalesced:
// consecutive threads, consecutive columns.
template <int ROWS, int DP, int STRIDE = tile_stride(DP), int THREADS = kThreads>
__device__ __forceinline__ void load_tile(const float* __restrict__ src, int row0, int n, int dim, bool vec4,
                                          float* tile) {
  constexpr int kStride = STRIDE;
  static_assert(STRIDE % 4 == 0, "rows of whole float4s");
  if (vec4) {
    constexpr int kVecs = DP / 4;
    for (int idx = threadIdx.x; idx < ROWS * kVecs; idx += THREADS) {
      const int r = idx / kVecs, c = idx % kVecs * 4;
      float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (row0 + r < n && c < dim) x = *reinterpret_cast<const float4*>(src + static_cast<int64_t>(row0 + r) * dim + c);
      *reinterpret_cast<float4*>(tile + r * kStride + c) = x;
    }
  } else {
    for (int idx = threadIdx.x; idx < ROWS * DP; idx += THREADS) {
      const int r = idx / DP, c = idx % DP;
      tile[r * kStride + c] = row0 + r < n && c < dim ? src[static_cast<int64_t>(row0 + r) * dim + c] : 0.0f;
    }
  }
}

// out[i][c] = sum over d of a[16 i][d] * b[16 c][d], in order of d: rows
// ty + 16 i of one [*, DP] tile against rows tx + 16 c of another (a and b
// point at rows ty and tx). The a reads are broadcasts within a half-warp.
template <int R, int C, int DP>
__device__ __forceinline__ void tile_dot(const float* a, const float* b, float (&out)[R][C]) {
  constexpr int kStride = tile_stride(DP);
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int c = 0; c < C; ++c) out[i][c] = 0.0f;
  }
#pragma unroll 2
  for (int d = 0; d < DP; d += 4) {
    float4 av[R], bv[C];
#pragma unroll
    for (int i = 0; i < R; ++i) av[i] = *reinterpret_cast<const float4*>(a + i * kSide * kStride + d);
#pragma unroll
    for (int c = 0; c < C; ++c) bv[c] = *reinterpret_cast<const float4*>(b + c * kSide * kStride + d);
#pragma unroll
    for (int i = 0; i < R; ++i) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        out[i][c] = fmaf(av[i].x, bv[c].x, out[i][c]);
        out[i][c] = fmaf(av[i].y, bv[c].y, out[i][c]);
        out[i][c] = fmaf(av[i].z, bv[c].z, out[i][c]);
        out[i][c] = fmaf(av[i].w, bv[c].w, out[i][c]);
      }
    }
  }
}

// acc[i][k] += sum over j < J of w[16 i][j] * m[j][32 k + {0, 1}]: rows
// ty + 16 i of a [*, J] weight tile (w points at row ty) times a [J, DP]
// tile (m points at column 2 tx). Half-warps read 128 contiguous bytes of m.
template <int R, int J, int DP>
__device__ __forceinline__ void tile_accumulate(const float* w, const float* m, float2 (&acc)[R][DP / 32]) {
  constexpr int kWStride = tile_stride(J), kStride = tile_stride(DP), kPairs = DP / 32;
#pragma unroll 2
  for (int j = 0; j < J; j += 4) {
    float4 wv[R];
#pragma unroll
    for (int i = 0; i < R; ++i) wv[i] = *reinterpret_cast<const float4*>(w + i * kSide * kWStride + j);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float2 mv[kPairs];
#pragma unroll
      for (int k = 0; k < kPairs; ++k) mv[k] = *reinterpret_cast<const float2*>(m + (j + e) * kStride + 32 * k);
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const float wi = component(wv[i], e);
#pragma unroll
        for (int k = 0; k < kPairs; ++k) {
          acc[i][k].x = fmaf(wi, mv[k].x, acc[i][k].x);
          acc[i][k].y = fmaf(wi, mv[k].y, acc[i][k].y);
        }
      }
    }
  }
}

// dvec[r] = sum over d of dout[r][d] * o[row0 + r][d] for the ROWS rows of a
// query tile (0 past row n): dout is the tile already in shared memory, o the
// row-major [n, dim] tensor. A warp per (row, 32 columns), coalesced; the
// partial sums (ROWS * DP / 32 floats of shared memory) are added in a fixed
// order. Starts and ends with every thread of the block (THREADS of them;
// barriers inside); dout's rows are STRIDE floats apart.
template <int ROWS, int DP, int STRIDE = tile_stride(DP), int THREADS = kThreads>
__device__ __forceinline__ void row_dots(const float* dout, const float* __restrict__ o, int row0, int n, int dim,
                                         float* partial, float* dvec) {
  constexpr int kChunks = DP / 32, kWarps = THREADS / 32, kStride = STRIDE;
  static_assert(ROWS <= THREADS, "a thread per row adds the partial sums");
  static_assert(ROWS * kChunks % kWarps == 0, "every warp runs as many shuffles");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int w = warp; w < ROWS * kChunks; w += kWarps) {
    const int r = w / kChunks, c = w % kChunks * 32 + lane;
    float x = 0.0f;
    if (row0 + r < n && c < dim) x = dout[r * kStride + c] * o[static_cast<int64_t>(row0 + r) * dim + c];
    x = warp_sum(x);
    if (lane == 0) partial[w] = x;
  }
  __syncthreads();
  if (threadIdx.x < ROWS) {
    float sum = 0.0f;
    for (int c = 0; c < kChunks; ++c) sum += partial[threadIdx.x * kChunks + c];
    dvec[threadIdx.x] = sum;
  }
  __syncthreads();
}

}  // namespace attention::cuda::detail

#endif  // ATTENTION_CUDA_TILE_OPS_CUH
