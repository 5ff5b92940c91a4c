// A persistent pool of worker threads for the CPU kernels of every challenge.
//
// Threads are created once (on first use) and sleep between calls, so a call
// pays a wake-up, not a thread creation. The calling thread works too: a pool
// of hardware_concurrency() participants has hardware_concurrency() - 1
// workers.
#ifndef KERNELS_COMMON_THREAD_POOL_H
#define KERNELS_COMMON_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kernels::common {

class ThreadPool {
 public:
  // `task(i, participant)` for i in [0, n_tasks); participant in [0, size())
  // identifies the executing thread, e.g. to index per-thread scratch.
  // Must not throw: nothing catches it on a worker.
  using TaskFn = void (*)(void* context, int64_t task, int participant);

  // The process-wide pool, destroyed (workers joined) at exit or dlclose.
  static ThreadPool& instance();

  explicit ThreadPool(int participants);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs every task and returns when all have finished. Calls from several
  // threads are serialised.
  void run(int64_t n_tasks, TaskFn fn, void* context);

 private:
  void worker_loop(int participant);
  void drain(int participant);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one run() at a time

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;  // bumped per run(); workers wait for a change
  int busy_workers_ = 0;
  bool stopping_ = false;

  TaskFn fn_ = nullptr;
  void* context_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_task_{0};
};

}  // namespace kernels::common

#endif  // KERNELS_COMMON_THREAD_POOL_H
