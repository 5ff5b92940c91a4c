// A persistent pool of worker threads for the CPU kernels of every challenge.
//
// One thread per CPU the process may run on, each bound to its CPU, does a
// call's tasks; the calling thread hands them out and waits. Unbound, two
// threads woken together were often placed on one CPU while the other sat
// idle, and a call took twice as long for a run of calls (docs/ARCHITECTURE.md,
// "Our CPU kernels' thread pool"). Threads are created once (on first use)
// and, between calls, spin for a short while (kSpin) before they sleep, so
// that calls in quick succession do not wait for a wake-up.
#ifndef KERNELS_COMMON_THREAD_POOL_H
#define KERNELS_COMMON_THREAD_POOL_H

#include <atomic>
#include <chrono>
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

  // The process-wide pool (a thread per CPU of the process's affinity),
  // destroyed (workers joined) at exit or dlclose.
  static ThreadPool& instance();

  // `cpus[p]` is the CPU thread p is bound to; none where `cpus` is empty or
  // binding fails (the threads then go where the scheduler puts them). A
  // pool of one participant has no thread: the caller runs every task.
  ThreadPool(int participants, const std::vector<int>& cpus = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return workers_.empty() ? 1 : static_cast<int>(workers_.size()); }

  // Runs every task and returns when all have finished. Calls from several
  // threads are serialised.
  void run(int64_t n_tasks, TaskFn fn, void* context);

 private:
  // How long a worker waiting for the next run spins before it sleeps.
  static constexpr std::chrono::microseconds kSpin{1000};

  void worker_loop(int participant, int cpu);
  void drain(int participant);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one run() at a time

  // A thread that finds its condition false sleeps on a condition variable;
  // the changes it waits for are made under mutex_, so that none is missed
  // between its last check and its sleep.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<uint64_t> generation_{0};  // bumped per run(); workers wait for a change
  std::atomic<int> busy_workers_{0};
  std::atomic<bool> stopping_{false};

  TaskFn fn_ = nullptr;
  void* context_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_task_{0};
};

}  // namespace kernels::common

#endif  // KERNELS_COMMON_THREAD_POOL_H
