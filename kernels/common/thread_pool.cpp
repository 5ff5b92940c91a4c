#include "thread_pool.h"

#include <sched.h>

#include <algorithm>

namespace kernels::common {

namespace {

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Binds the calling thread to `cpu`. A failure leaves it unbound, which
// costs only placement: nothing to report from inside a kernel.
void bind_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)::sched_setaffinity(0, sizeof set, &set);
}

// Tells the core that this thread is spinning (lets its sibling hyperthread
// run); nothing where there is no such instruction.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadPool& ThreadPool::instance() {
  // A function-local static: its destructor runs at exit, and at dlclose of a
  // submission library, so no worker outlives the code it runs.
  static ThreadPool pool = [] {
    std::vector<int> cpus = allowed_cpus();
    if (cpus.empty()) return ThreadPool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    return ThreadPool(static_cast<int>(cpus.size()), cpus);
  }();
  return pool;
}

ThreadPool::ThreadPool(int participants, const std::vector<int>& cpus) {
  if (participants <= 1) return;
  workers_.reserve(static_cast<size_t>(participants));
  for (int p = 0; p < participants; ++p) {
    const int cpu = static_cast<size_t>(p) < cpus.size() ? cpus[static_cast<size_t>(p)] : -1;
    workers_.emplace_back([this, p, cpu] { worker_loop(p, cpu); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true, std::memory_order_release);
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

void ThreadPool::worker_loop(int participant, int cpu) {
  if (cpu >= 0) bind_to(cpu);
  uint64_t seen = 0;
  // The acquire loads pair with run()'s release of the new generation: a
  // worker that sees it sees the job's fields.
  auto woken = [&] {
    return stopping_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen;
  };
  for (;;) {
    // Spin, yielding to whatever else wants this CPU, then sleep.
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    bool ready = woken();
    while (!ready && std::chrono::steady_clock::now() < deadline) {
      for (int i = 0; i < 64 && !ready; ++i) {
        cpu_relax();
        ready = woken();
      }
      if (!ready) std::this_thread::yield();
    }
    if (!ready) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, woken);
    }
    if (stopping_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    drain(participant);
    if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t n_tasks, TaskFn fn, void* context) {
  std::lock_guard<std::mutex> serial(run_mutex_);
  if (workers_.empty() || n_tasks <= 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(context, t, 0);
    return;
  }
  // Every worker has checked in from the last run (below), so none reads
  // these fields now.
  fn_ = fn;
  context_ = context;
  n_tasks_ = n_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  busy_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  // The caller sleeps rather than spins: its CPU is some worker's. Every
  // worker checks in, even one that found no task left: the job's fields
  // must stay valid until the last worker has stopped reading them.
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_workers_.load(std::memory_order_acquire) == 0; });
}

}  // namespace kernels::common
