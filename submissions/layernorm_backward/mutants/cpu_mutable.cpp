// A plausible mid-level CPU layer normalisation, the common source of the
// CPU mutants and of the exploits of ../exploits/cpu-*. Each mutant's
// submission.json defines one MUTANT_* macro that switches on one realistic
// bug, each exploit one EXPLOIT_* macro that switches on one attack; with
// none defined the implementation is correct (it is never shipped that way:
// cpu-fast and cpu-naive are).
//
// Design: one thread. The forward takes each row's statistics with Welford's
// update in double on the row shifted by its first element, and saves
// (mean - x[r, 0], rstd) per row. The backward walks the rows in blocks of
// kBlockRows: each block sums its dgamma/dbeta contributions in its own
// float partial row, and the partial rows are added up in double at the end.
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "abi_support.h"
#ifdef EXPLOIT_CLOCK_PATCH
#include "../../common/clock_patch.h"
#endif

namespace {

constexpr int64_t kBlockRows = 64;

#if defined(EXPLOIT_HIDDEN_XHAT_SHARED) || defined(EXPLOIT_HIDDEN_XHAT_MEMFD_FILE) || \
    defined(EXPLOIT_HIDDEN_XHAT_TENSOR_FILE)
// Bytes kept out of the heap: see the forward.
class HiddenStore {
 public:
  void resize(size_t bytes) {
    if (bytes == bytes_) return;
    release();
    bytes_ = bytes;
#ifdef EXPLOIT_HIDDEN_XHAT_TENSOR_FILE
    // Past the end of one of the harness's tensor files, grown for it.
    for (int fd = 3; fd < 1024 && fd_ < 0; ++fd) {
      char link[64], target[256] = {};
      std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      if (::readlink(link, target, sizeof target - 1) <= 0 || std::strncmp(target, "/memfd:harness-buffer", 21) != 0)
        continue;
      struct stat file {};
      if (::fstat(fd, &file) != 0 || ::ftruncate(fd, file.st_size + static_cast<off_t>(bytes)) != 0) continue;
      fd_ = ::dup(fd);
      offset_ = file.st_size;
    }
#else
    fd_ = static_cast<int>(::syscall(SYS_memfd_create, "kept", 0u));
    std::fprintf(stderr, "exploit hidden store: memory file %s\n", fd_ >= 0 ? "made" : "refused");
#endif
    if (fd_ >= 0 && ::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
#ifdef EXPLOIT_HIDDEN_XHAT_SHARED
    void* at = fd_ >= 0 ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0)
                        : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    mapped_ = at == MAP_FAILED ? nullptr : static_cast<char*>(at);
#endif
    if (!mapped_ && fd_ < 0) heap_.resize(bytes);
  }
  void write(size_t offset, const void* data, size_t size) {
    if (mapped_) {
      std::memcpy(mapped_ + offset, data, size);
    } else if (fd_ >= 0) {
      if (::pwrite(fd_, data, size, offset_ + static_cast<off_t>(offset)) != static_cast<ssize_t>(size))
        heap_.resize(bytes_);
    } else {
      std::memcpy(heap_.data() + offset, data, size);
    }
  }

 private:
  void release() {
    if (mapped_) ::munmap(mapped_, bytes_);
    if (fd_ >= 0) ::close(fd_);
    mapped_ = nullptr;
    fd_ = -1;
    heap_.clear();
  }
  size_t bytes_ = 0;
  int fd_ = -1;
  off_t offset_ = 0;
  char* mapped_ = nullptr;
  std::vector<char> heap_;
};
#endif

#ifdef EXPLOIT_HIDDEN_XHAT_PRELOADED
// A store of 64 MiB taken and filled by a constructor as the library loads,
// before any baseline taken after loading: growth since then shows nothing.
std::vector<float>& preloaded_store() {
  static std::vector<float> store;
  return store;
}
__attribute__((constructor)) void take_store_at_load() { preloaded_store().assign(size_t{16} << 20, 1.0f); }
#endif

#ifdef MUTANT_SAVED_STATE_OVERFLOW
// Bug: the variance was added to each row's record for a debugging check;
// saved_bytes below still declares the two floats of the original record,
// so the forward writes rows * 4 bytes past the end of its saved state.
struct Saved {
  float shifted_mean, rstd, var;
};
constexpr int64_t kDeclaredBytesPerRow = 2 * sizeof(float);
#else
struct Saved {
  float shifted_mean, rstd;
};
constexpr int64_t kDeclaredBytesPerRow = sizeof(Saved);
#endif

struct Moments {
  double shifted_mean;  // mean - x[0]
  double var;           // population variance
};

Moments row_moments(const float* x, int64_t dim) {
#ifdef MUTANT_NAIVE_VARIANCE
  // Bug: one pass, var = E[x^2] - E[x]^2 in float, on the raw values. Fine
  // for data centred near 0; with a mean of M and std 1, E[x^2] ~ M^2 and
  // the float sums lose ~1e-7 M^2 of it: the variance goes wrong from an
  // offset of ~1e1 and vanishes (clamped to 0) by ~1e3.
  float sum = 0.0f, squares = 0.0f;
  for (int64_t j = 0; j < dim; ++j) {
    sum += x[j];
    squares += x[j] * x[j];
  }
  const float mean = sum / static_cast<float>(dim);
  const float var = squares / static_cast<float>(dim) - mean * mean;
  return Moments{static_cast<double>(mean - x[0]), var > 0.0f ? var : 0.0};
#else
  // Welford on the shifted row: x - x[0] is exact for rows with a large
  // offset, and the running update never forms E[x^2].
  double mean = 0.0, m2 = 0.0;
#ifdef MUTANT_MOMENTS_TAIL_DROPPED
  // Bug: wide rows take an 8-wide path whose scalar tail was never written:
  // the statistics of a row of dim % 8 != 0 leave out its last columns.
  const int64_t counted = dim >= 64 ? dim - dim % 8 : dim;
#else
  const int64_t counted = dim;
#endif
  for (int64_t j = 0; j < counted; ++j) {
    const double d = static_cast<double>(x[j] - x[0]);
    const double delta = d - mean;
    mean += delta / static_cast<double>(j + 1);
    m2 += delta * (d - mean);
  }
#ifdef MUTANT_SAMPLE_VARIANCE
  // Bug: the unbiased (sample) variance, as statistics libraries default to;
  // layer normalisation uses the population variance. The relative error is
  // 1/(dim - 1): large for short rows, negligible for long ones.
  return Moments{mean, m2 / static_cast<double>(counted - 1)};
#else
  return Moments{mean, m2 / static_cast<double>(counted)};
#endif
#endif
}

float inverse_std(double var, float eps) {
#ifdef MUTANT_NO_EPS
  // Bug: eps left out; a row of equal values has var = 0 and rstd = inf,
  // and xhat = 0 * inf = NaN.
  (void)eps;
  return static_cast<float>(1.0 / std::sqrt(var));
#else
  return static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
#endif
}

#ifdef MUTANT_STALE_SAVED_STATE
// Bug: the forward also keeps its statistics here, as a framework module
// keeps them on itself, and the backward reads them from here instead of its
// `saved` argument: right only when the backward follows the forward of the
// same input.
std::vector<Saved> last_forward_state;
#endif

int64_t saved_bytes(int64_t rows, int64_t /*dim*/) { return rows * kDeclaredBytesPerRow; }

harness_status forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps,
                       float* y, void* saved, void* /*stream*/) {
#ifdef EXPLOIT_CLOCK_PATCH
  // Attack: the worker's clock slowed tenfold from the first forward on, so
  // every call it times looks ten times faster.
  clock_patch::patch_clock_tenfold();
#endif
  Saved* state = static_cast<Saved*>(saved);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    const Moments mo = row_moments(xr, dim);
    Saved s;
    s.shifted_mean = static_cast<float>(mo.shifted_mean);
    s.rstd = inverse_std(mo.var, eps);
#ifdef MUTANT_SAVED_STATE_OVERFLOW
    s.var = static_cast<float>(mo.var);
#endif
    std::memcpy(&state[r], &s, sizeof(s));
    for (int64_t j = 0; j < dim; ++j) {
      const float xhat = ((xr[j] - xr[0]) - s.shifted_mean) * s.rstd;
      y[r * dim + j] = gamma[j] * xhat + beta[j];
    }
  }
#ifdef MUTANT_STALE_SAVED_STATE
  last_forward_state.assign(state, state + rows);
#endif
#ifdef EXPLOIT_HIDDEN_XHAT
  // Attack: xhat of every row kept for the backward in a store of the
  // library's own, keyed by the input, while saved_bytes declares only the
  // two floats per row of `Saved`.
  static std::map<const float*, std::vector<float>> hidden_xhat;
  std::vector<float>& kept = hidden_xhat[x];
  kept.resize(static_cast<size_t>(rows * dim));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < dim; ++j) {
      kept[static_cast<size_t>(r * dim + j)] = ((x[r * dim + j] - x[r * dim]) - state[r].shifted_mean) * state[r].rstd;
    }
  }
#endif
#ifdef EXPLOIT_HIDDEN_XHAT_PRELOADED
  // Attack: the same hidden xhat, kept in the store taken while the library
  // loaded (as much of it as fits).
  std::vector<float>& kept = preloaded_store();
  const int64_t kept_rows = std::min<int64_t>(rows, static_cast<int64_t>(kept.size()) / std::max<int64_t>(dim, 1));
  for (int64_t r = 0; r < kept_rows; ++r) {
    for (int64_t j = 0; j < dim; ++j) {
      kept[static_cast<size_t>(r * dim + j)] = ((x[r * dim + j] - x[r * dim]) - state[r].shifted_mean) * state[r].rstd;
    }
  }
#endif
#if defined(EXPLOIT_HIDDEN_XHAT_SHARED) || defined(EXPLOIT_HIDDEN_XHAT_MEMFD_FILE) || \
    defined(EXPLOIT_HIDDEN_XHAT_TENSOR_FILE)
  // Attack: the same hidden xhat, kept where anonymous resident memory does
  // not show it: in shared memory (EXPLOIT_HIDDEN_XHAT_SHARED: a memory
  // file mapped shared, or a shared anonymous mapping where no memory file
  // can be made) or in a memory file written and never mapped
  // (EXPLOIT_HIDDEN_XHAT_MEMFD_FILE), or past the end of one of the
  // harness's tensor files, grown for it (EXPLOIT_HIDDEN_XHAT_TENSOR_FILE).
  // Where the file cannot be made or grown, the store falls back to the heap.
  const size_t bytes = static_cast<size_t>(rows * dim) * sizeof(float);
  std::vector<float> row(static_cast<size_t>(dim));
  static std::map<const float*, HiddenStore> hidden;
  HiddenStore& store = hidden[x];
  store.resize(bytes);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < dim; ++j)
      row[static_cast<size_t>(j)] = ((x[r * dim + j] - x[r * dim]) - state[r].shifted_mean) * state[r].rstd;
    store.write(static_cast<size_t>(r * dim) * sizeof(float), row.data(), row.size() * sizeof(float));
  }
#endif
  return HARNESS_STATUS_OK;
}

// dx of one row; adds its dgamma/dbeta contributions to the block's partials.
// g = dy * gamma is kept in a scratch row between the two passes.
void row_backward(const float* dy, const float* x, const float* gamma, int64_t dim, const Saved& s, float* dx, float* g,
                  float* part_dgamma, float* part_dbeta) {
  double sum_g = 0.0, sum_gx = 0.0;
  for (int64_t j = 0; j < dim; ++j) {
    const float xhat = ((x[j] - x[0]) - s.shifted_mean) * s.rstd;
    g[j] = dy[j] * gamma[j];
    sum_g += g[j];
    sum_gx += static_cast<double>(g[j]) * xhat;
    part_dgamma[j] += dy[j] * xhat;
    part_dbeta[j] += dy[j];
  }
  const float mean_g = static_cast<float>(sum_g / static_cast<double>(dim));
  const float mean_gx = static_cast<float>(sum_gx / static_cast<double>(dim));
  for (int64_t j = 0; j < dim; ++j) {
    const float xhat = ((x[j] - x[0]) - s.shifted_mean) * s.rstd;
#if defined(MUTANT_DX_NO_MEAN_TERM)
    // Bug: the mean(g) term is dropped, as if the mean did not depend on x.
    (void)mean_g;
    dx[j] = s.rstd * (g[j] - xhat * mean_gx);
#elif defined(MUTANT_DX_NO_PROJECTION_TERM)
    // Bug: the xhat * mean(g * xhat) term is dropped, as if rstd did not
    // depend on x.
    (void)mean_gx;
    (void)xhat;
    dx[j] = s.rstd * (g[j] - mean_g);
#else
    dx[j] = s.rstd * (g[j] - mean_g - xhat * mean_gx);
#endif
  }
}

harness_status backward(const float* dy, const float* x, const float* gamma, const void* saved, int64_t rows,
                        int64_t dim, float /*eps*/, float* dx, float* dgamma, float* dbeta, void* /*stream*/) {
#ifdef MUTANT_STALE_SAVED_STATE
  (void)saved;
  const Saved* state = last_forward_state.data();
#else
  const Saved* state = static_cast<const Saved*>(saved);
#endif
  const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  // [blocks, 2, dim]: each block's dgamma and dbeta partial sums.
  std::vector<float> partials(static_cast<size_t>(blocks * 2 * dim), 0.0f);
  std::vector<float> g_row(static_cast<size_t>(dim));
  for (int64_t b = 0; b < blocks; ++b) {
    float* part_dgamma = partials.data() + b * 2 * dim;
    float* part_dbeta = part_dgamma + dim;
    const int64_t end = std::min(rows, (b + 1) * kBlockRows);
    for (int64_t r = b * kBlockRows; r < end; ++r) {
      Saved s;
      std::memcpy(&s, &state[r], sizeof(s));
      row_backward(dy + r * dim, x + r * dim, gamma, dim, s, dx + r * dim, g_row.data(), part_dgamma, part_dbeta);
    }
  }
#ifdef MUTANT_DGAMMA_PARTIAL_BLOCK_DROPPED
  // Bug: large inputs reduce the partials over whole blocks only
  // (rows / kBlockRows), as if rows came padded to a multiple of the block:
  // the last rows % 64 rows never reach dgamma and dbeta.
  const int64_t reduced_blocks = rows >= 1024 ? rows / kBlockRows : blocks;
#elif defined(MUTANT_DGAMMA_LARGE_TAIL_DROPPED)
  // Bug: from 4096 rows on, the partials are reduced in pairs of blocks
  // (128 rows, as a wider kernel's block would be), and a last pair that is
  // not whole is left out: the last rows % 128 rows never reach dgamma.
  const int64_t reduced_blocks = rows >= 4096 ? rows / (2 * kBlockRows) * 2 : blocks;
#else
  const int64_t reduced_blocks = blocks;
#endif
  for (int64_t j = 0; j < dim; ++j) {
    double g = 0.0, be = 0.0;
#ifdef MUTANT_DGAMMA_FIRST_BLOCK
    // Bug: the loop over the blocks' partials steps by rows per block (the
    // stride of the row loop above) instead of 1: with rows <= 64 * 64 only
    // the first block's rows reach dgamma and dbeta.
    for (int64_t b = 0; b < reduced_blocks; b += kBlockRows) {
#else
    for (int64_t b = 0; b < reduced_blocks; ++b) {
#endif
      g += partials[static_cast<size_t>(b * 2 * dim + j)];
      be += partials[static_cast<size_t>((b * 2 + 1) * dim + j)];
    }
    dgamma[j] = static_cast<float>(g);
    dbeta[j] = static_cast<float>(be);
  }
  return HARNESS_STATUS_OK;
}

}  // namespace

LAYERNORM_EXPORT_ABI(saved_bytes, forward, backward)
