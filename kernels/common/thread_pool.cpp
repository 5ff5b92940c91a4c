#include "thread_pool.h"

#include <algorithm>

namespace kernels::common {

ThreadPool& ThreadPool::instance() {
  // A function-local static: its destructor runs at exit, and at dlclose of a
  // submission library, so no worker outlives the code it runs.
  static ThreadPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return pool;
}

ThreadPool::ThreadPool(int participants) {
  workers_.reserve(static_cast<size_t>(std::max(0, participants - 1)));
  for (int p = 1; p < participants; ++p) workers_.emplace_back([this, p] { worker_loop(p); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::drain(int participant) {
  for (;;) {
    const int64_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= n_tasks_) return;
    fn_(context_, task, participant);
  }
}

void ThreadPool::worker_loop(int participant) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    drain(participant);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_workers_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t n_tasks, TaskFn fn, void* context) {
  std::lock_guard<std::mutex> serial(run_mutex_);
  if (workers_.empty() || n_tasks <= 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(context, t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    context_ = context;
    n_tasks_ = n_tasks;
    next_task_.store(0, std::memory_order_relaxed);
    busy_workers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  drain(0);
  // Every worker checks in, even one that found no task left: the job's
  // fields must stay valid until the last worker has stopped reading them.
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_workers_ == 0; });
}

}  // namespace kernels::common
