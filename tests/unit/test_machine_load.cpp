// The machine-load window (harness/witness/machine_load.h): /proc's counts
// read right, a process that is not the submission's seen as the machine's
// other load, one that is counted as the case's own; and the report's line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness/core/clock.h"
#include "harness/core/processes.h"
#include "harness/report/markdown_report.h"
#include "harness/results/machine_load_summary.h"
#include "harness/witness/machine_load.h"
#include "synthetic_results.h"

namespace harness {
namespace {

TEST(MachineLoad, ProcStatsFirstLineGivesBusyAndAllSeconds) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const auto t = parse_machine_cpu_times("cpu  100 5 50 1000 20 3 2 10 7 0\ncpu0 50 2 25 500 10 1 1 5 3 0\n", 100);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->busy_s, 1.70);  // steal is busy (another guest's), guest is inside user
  EXPECT_DOUBLE_EQ(t->all_s, 11.90);
  EXPECT_FALSE(parse_machine_cpu_times("intr 1 2 3\n", 100));
  EXPECT_FALSE(parse_machine_cpu_times("cpu  1 2 3\n", 100));
  EXPECT_FALSE(parse_machine_cpu_times("", 100));
}

TEST(MachineLoad, AProcesssTimeIsCountedFromAfterItsName) {
  // A name may hold spaces and parentheses: fields count from the last ')'.
  const std::string stat =
      "4242 (a) b (c) R 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 7 3 20 0 1 0 12345 0 0 18446744073709551615";
  EXPECT_DOUBLE_EQ(*parse_process_cpu_seconds(stat, 100), 3.10);  // utime + stime + cutime + cstime
  EXPECT_FALSE(parse_process_cpu_seconds("4242 (a) R 1 2", 100));
  EXPECT_FALSE(parse_process_cpu_seconds("", 100));
}

// A child that spins until killed.
pid_t spinner() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    volatile uint64_t n = 0;
    for (;;) n = n + 1;
  }
  return pid;
}

void stop(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST(MachineLoad, ASpinningProcessIsOtherLoadUnlessItIsTheSubmissions) {
  const pid_t spin = spinner();
  ASSERT_GT(spin, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // Not the submission's: the machine's other load. It holds a core but for
  // what other tests running beside this one take (two cores, two jobs).
  const LoadWindow others([] { return std::vector<pid_t>{}; });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto seen_as_other = others.close();
  // The submission's: its own.
  const LoadWindow ours([spin] { return std::vector<pid_t>{spin}; });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto seen_as_ours = ours.close();
  stop(spin);
  ASSERT_TRUE(seen_as_other && seen_as_ours) << "/proc/stat unreadable";
  EXPECT_GT(seen_as_other->other_cores, 0.3);
  EXPECT_LT(seen_as_other->ours_cores, 0.1);  // this process slept
  EXPECT_GT(seen_as_ours->ours_cores, 0.3);
  EXPECT_NEAR(seen_as_ours->seconds, 0.6, 0.3);
  const double cores = static_cast<double>(std::thread::hardware_concurrency());
  EXPECT_LE(seen_as_ours->ours_cores + seen_as_ours->other_cores, cores * 1.1);
}

TEST(MachineLoad, TheReportSaysHowBusyTheMachineWasAndWhenItWasBusy) {
  std::vector<CaseResult> cases;
  for (const double other : {0.0, 0.1, 1.5}) {
    CaseResult c = testing::make_case("perf.a" + std::to_string(cases.size()), Suite::perf, Verdict::pass, {1e6, 1e6});
    c.timing->machine_load = TimingResult::MachineLoad{other, 1.0, 0.2, 2};
    c.bandwidth = 1e9;
    cases.push_back(c);
  }
  RunResults busy = testing::results(cases);
  const MachineLoadSummary summary = summarize_machine_load(busy);
  EXPECT_EQ(summary.other_cores, (std::vector<double>{0.0, 0.1, 1.5}));
  EXPECT_EQ(summary.busy, 1u);  // 1.5 of 2 cores; 0.1 is within a quarter
  ASSERT_TRUE(summary.busiest_case);
  EXPECT_EQ(summary.busiest_case->id, "perf.a2");
  const std::string report = render_markdown(busy);
  EXPECT_NE(report.find("0.10 cores busy in the median timing of 3, at most 1.50 of 2 (`softmax_topk` / `mine`, "
                        "`perf.a2`)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("**1 of 3 timings shared the machine with other work holding more than a quarter of its "
                        "cores**"),
            std::string::npos)
      << report;
  // Beside the busy timing itself, in the performance table.
  EXPECT_NE(report.find("machine busy: others held 1.5 of 2 cores"), std::string::npos) << report;
  // A quiet machine: the figures, no warning.
  for (CaseResult& c : busy.entries[0].cases) c.timing->machine_load->other_cores = 0.05;
  const std::string quiet = render_markdown(busy);
  EXPECT_NE(quiet.find("0.05 cores busy in the median timing of 3"), std::string::npos) << quiet;
  EXPECT_EQ(quiet.find("shared the machine"), std::string::npos) << quiet;
  // Results without readings: no line.
  for (CaseResult& c : busy.entries[0].cases) c.timing->machine_load.reset();
  EXPECT_EQ(render_markdown(busy).find("other processes' load"), std::string::npos);
}

}  // namespace
}  // namespace harness
