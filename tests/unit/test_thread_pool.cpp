// The CPU kernels' thread pool (kernels/common/thread_pool.h): every task
// runs once, on a participant in range; each participant keeps to a CPU of
// its own, so that two of them never share one while another CPU idles.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "common/thread_pool.h"

namespace {

using kernels::common::ThreadPool;

struct Counts {
  std::vector<std::atomic<int>> runs;
  std::atomic<int> out_of_range{0};
  int participants;
  explicit Counts(int64_t tasks, int participants_) : runs(static_cast<size_t>(tasks)), participants(participants_) {}
};

void count(void* context, int64_t task, int participant) {
  auto* c = static_cast<Counts*>(context);
  c->runs[static_cast<size_t>(task)].fetch_add(1);
  if (participant < 0 || participant >= c->participants) c->out_of_range.fetch_add(1);
}

void expect_each_task_once(ThreadPool& pool, int64_t tasks) {
  Counts c(tasks, pool.size());
  pool.run(tasks, count, &c);
  for (int64_t t = 0; t < tasks; ++t) EXPECT_EQ(c.runs[static_cast<size_t>(t)].load(), 1) << "task " << t;
  EXPECT_EQ(c.out_of_range.load(), 0);
}

TEST(ThreadPool, EveryTaskRunsOnceOnAParticipantInRange) {
  ThreadPool& pool = ThreadPool::instance();
  for (int64_t tasks : {0, 1, 2, 3, 64, 1000}) expect_each_task_once(pool, tasks);
  // Runs in quick succession (workers still spinning) and after a pause
  // longer than the spin (workers asleep) alike.
  for (int i = 0; i < 50; ++i) expect_each_task_once(pool, 7);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  expect_each_task_once(pool, 7);
}

TEST(ThreadPool, APoolOfOneRunsEveryTaskOnTheCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.size(), 1);
  struct Seen {
    std::thread::id caller = std::this_thread::get_id();
    int elsewhere = 0;
  } seen;
  pool.run(
      5,
      [](void* context, int64_t, int participant) {
        auto* s = static_cast<Seen*>(context);
        if (std::this_thread::get_id() != s->caller || participant != 0) ++s->elsewhere;
      },
      &seen);
  EXPECT_EQ(seen.elsewhere, 0);
}

TEST(ThreadPool, APoolIsJoinedWhetherItsThreadsSpinOrSleep) {
  for (int pause_ms : {0, 20}) {
    ThreadPool pool(3);
    EXPECT_EQ(pool.size(), 3);
    expect_each_task_once(pool, 9);
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }  // each destructor returns: its workers saw `stopping_`, awake or asleep
}

// Each participant of the process's pool stays on one CPU, and no two share
// one: unbound, the scheduler put both threads of a 2-CPU pool on one CPU for
// runs of calls (docs/ARCHITECTURE.md, "Our CPU kernels' thread pool").
TEST(ThreadPool, EachParticipantKeepsToACpuOfItsOwn) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "this process may run on one CPU only: nothing to keep apart";
  ThreadPool& pool = ThreadPool::instance();
  ASSERT_EQ(pool.size(), CPU_COUNT(&allowed));

  struct Cpus {
    std::vector<std::set<int>> of;  // per participant, written by that participant alone
  } cpus{std::vector<std::set<int>>(static_cast<size_t>(pool.size()))};
  for (int round = 0; round < 200; ++round) {
    pool.run(
        pool.size() * 4,
        [](void* context, int64_t, int participant) {
          const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
          while (std::chrono::steady_clock::now() < until) {
          }
          static_cast<Cpus*>(context)->of[static_cast<size_t>(participant)].insert(::sched_getcpu());
        },
        &cpus);
    if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::set<int> distinct;
  for (size_t p = 0; p < cpus.of.size(); ++p) {
    if (cpus.of[p].empty()) continue;  // found no task left in every round
    EXPECT_EQ(cpus.of[p].size(), 1u) << "participant " << p << " ran on " << cpus.of[p].size() << " CPUs";
    EXPECT_TRUE(distinct.insert(*cpus.of[p].begin()).second)
        << "participant " << p << " shares CPU " << *cpus.of[p].begin() << " with another";
  }
}

}  // namespace
