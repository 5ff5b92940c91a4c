#include "layernorm_cpu.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "row_ops.h"
// The persistent pool the CPU kernels share (one pool per shared library:
// each submission is its own .so).
#include "common/thread_pool.h"

namespace layernorm::cpu {
namespace {

using kernels::common::ThreadPool;

// A forward task covers about this many elements: enough to amortise the
// pool's hand-out, small enough that the tail of a call stays balanced.
constexpr int64_t kForwardTaskElements = int64_t{1} << 16;
// Backward tasks: at most this many (each costs a [2, dim] double partial
// that the final combine reads), at least kBackwardTaskElements each. The
// count depends on the shape only, so dgamma and dbeta are bitwise the same
// on any number of threads.
constexpr int64_t kMaxBackwardTasks = 64;
constexpr int64_t kBackwardTaskElements = int64_t{1} << 14;
// Columns per task of the final combine.
constexpr int64_t kCombineColumns = 2048;

struct ForwardJob {
  const float *x, *gamma, *beta;
  int64_t rows, dim, rows_per_task;
  float eps;
  float* y;
  RowStats* saved;
};

void forward_task(void* context, int64_t task, int /*participant*/) {
  const ForwardJob& job = *static_cast<const ForwardJob*>(context);
  const int64_t end = std::min(job.rows, (task + 1) * job.rows_per_task);
  for (int64_t r = task * job.rows_per_task; r < end; ++r) {
    const float* x = job.x + r * job.dim;
    const RowStats s = detail::row_statistics(x, job.dim, job.eps);
    job.saved[r] = s;
    detail::row_normalise(x, job.gamma, job.beta, job.dim, s, job.y + r * job.dim);
  }
}

struct BackwardJob {
  const float *dy, *x, *gamma;
  const RowStats* saved;
  int64_t rows, dim, tasks;
  float* dx;
  double* partials;  // [tasks, 2, dim]: each task's dgamma and dbeta sums
  float *dgamma, *dbeta;
};

void backward_task(void* context, int64_t task, int /*participant*/) {
  const BackwardJob& job = *static_cast<const BackwardJob*>(context);
  double* acc_dgamma = job.partials + task * 2 * job.dim;
  double* acc_dbeta = acc_dgamma + job.dim;
  std::fill(acc_dgamma, acc_dbeta + job.dim, 0.0);
  // Balanced split: task t gets rows [t * rows / tasks, (t + 1) * rows / tasks).
  const int64_t begin = task * job.rows / job.tasks, end = (task + 1) * job.rows / job.tasks;
  for (int64_t r = begin; r < end; ++r)
    detail::row_backward(job.dy + r * job.dim, job.x + r * job.dim, job.gamma, job.dim, job.saved[r],
                         job.dx + r * job.dim, acc_dgamma, acc_dbeta);
}

void combine_task(void* context, int64_t task, int /*participant*/) {
  const BackwardJob& job = *static_cast<const BackwardJob*>(context);
  const int64_t begin = task * kCombineColumns, end = std::min(job.dim, begin + kCombineColumns);
  for (int64_t c = begin; c < end; ++c) {
    double g = 0.0, b = 0.0;
    for (int64_t t = 0; t < job.tasks; ++t) {
      g += job.partials[(2 * t) * job.dim + c];
      b += job.partials[(2 * t + 1) * job.dim + c];
    }
    job.dgamma[c] = static_cast<float>(g);
    job.dbeta[c] = static_cast<float>(b);
  }
}

// The tasks' partial sums, kept between calls: a fresh multi-MiB vector per
// call would pay its page faults every time. One backward at a time uses it
// (the pool serialises calls anyway).
std::mutex scratch_mutex;
std::vector<double>& scratch() {
  static std::vector<double> buffer;
  return buffer;
}

}  // namespace

void forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float eps, float* y,
             RowStats* saved) {
  ForwardJob job{x, gamma, beta, rows, dim, std::max<int64_t>(1, kForwardTaskElements / dim), eps, y, saved};
  const int64_t tasks = (rows + job.rows_per_task - 1) / job.rows_per_task;
  ThreadPool::instance().run(tasks, forward_task, &job);
}

void backward(const float* dy, const float* x, const float* gamma, const RowStats* saved, int64_t rows, int64_t dim,
              float* dx, float* dgamma, float* dbeta) {
  const int64_t tasks = std::clamp<int64_t>(rows * dim / kBackwardTaskElements, 1, std::min(rows, kMaxBackwardTasks));
  std::lock_guard<std::mutex> lock(scratch_mutex);
  std::vector<double>& partials = scratch();
  const size_t needed = static_cast<size_t>(tasks * 2 * dim);
  if (partials.size() < needed) partials.resize(needed);
  BackwardJob job{dy, x, gamma, saved, rows, dim, tasks, dx, partials.data(), dgamma, dbeta};
  ThreadPool& pool = ThreadPool::instance();
  pool.run(tasks, backward_task, &job);
  pool.run((dim + kCombineColumns - 1) / kCombineColumns, combine_task, &job);
}

}  // namespace layernorm::cpu
