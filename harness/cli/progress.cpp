#include "harness/cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "harness/core/clock.h"
#include "harness/results/machine_load_summary.h"
#include "harness/results/verdict_counts.h"

namespace harness {

ProgressPrinter::ProgressPrinter(size_t total_cases, Verbosity verbosity)
    : total_(total_cases), verbosity_(verbosity), terminal_(::isatty(2) == 1), start_ns_(monotonic_ns()) {}

std::string ProgressPrinter::elapsed() const {
  const auto seconds = (monotonic_ns() - start_ns_) / 1000000000;
  return fmt::format("{:02}:{:02}", seconds / 60, seconds % 60);
}

void ProgressPrinter::clear_status_line() {
  if (status_shown_) {
    std::fputs("\r\033[K", stderr);
    status_shown_ = false;
  }
}

void ProgressPrinter::entry_started(const PlannedEntry& entry) {
  if (verbosity_ == Verbosity::quiet || terminal_) return;
  std::fprintf(stderr, "[%zu/%zu %s] %s / %s (%s): %zu cases\n", done_, total_, elapsed().c_str(),
               entry.challenge->name().c_str(), entry.submission.name.c_str(), entry.device->id.c_str(),
               entry.cases.size());
}

void ProgressPrinter::case_started(const PlannedEntry& entry, const CaseSpec& spec) {
  if (verbosity_ == Verbosity::quiet || !terminal_) return;
  clear_status_line();
  std::fprintf(stderr, "[%zu/%zu %s] %zu failing | %s / %s (%s) | %s", done_, total_, elapsed().c_str(), failures_,
               entry.challenge->name().c_str(), entry.submission.name.c_str(), entry.device->id.c_str(),
               spec.id.c_str());
  std::fflush(stderr);
  status_shown_ = true;
}

void ProgressPrinter::case_finished(const PlannedEntry& entry, const CaseResult& result) {
  ++done_;
  const bool failed = is_failure(result.verdict) || result.verdict == Verdict::harness_error;
  // A mutant's failure is its purpose; a peer's is a finding about the peer.
  const bool mutant = is_unranked_role(entry.submission.role) || is_peer_role(entry.submission.role);
  if (failed && !mutant) ++failures_;
  const bool show = verbosity_ == Verbosity::verbose || (verbosity_ == Verbosity::normal && failed && !mutant);
  if (!show) return;
  clear_status_line();
  std::string message = result.message.size() > 240 ? result.message.substr(0, 240) + "..." : result.message;
  std::fprintf(stderr, "    %-5s %s %s%s%s\n", failed ? "FAIL" : "ok",
               std::string(verdict_name(result.verdict)).c_str(), result.id.c_str(), message.empty() ? "" : ": ",
               message.c_str());
  if (failed) std::fprintf(stderr, "          reproduce: %s\n", result.reproduce.c_str());
}

void ProgressPrinter::entry_finished(const EntryResult& entry) {
  if (verbosity_ == Verbosity::quiet) return;
  clear_status_line();
  double seconds = 0;
  for (const auto& c : entry.cases) seconds += c.seconds;
  std::fprintf(stderr, "  %s / %s (%s): %s [%.1f s]\n", entry.challenge.c_str(), entry.submission.name.c_str(),
               entry.device.c_str(), verdict_counts(entry).c_str(), seconds);
}

void ProgressPrinter::print_summary(const RunResults& results) const {
  std::fprintf(stderr, "\n%-19s %-40s %-8s %8s %5s  %s\n", "challenge", "submission", "device", "overall", "grade",
               "verdicts");
  for (const auto& e : results.entries) {
    const std::string overall = e.scores ? fmt::format("{:.1f}", e.scores->overall) : "-";
    std::string grade = e.scores ? e.scores->grade : "-";
    if (is_unranked_role(e.submission.role) || is_peer_role(e.submission.role)) grade = "(" + e.submission.role + ")";
    std::fprintf(stderr, "%-19s %-40s %-8s %8s %5s  %s\n", e.challenge.c_str(), e.submission.name.c_str(),
                 e.device.c_str(), overall.c_str(), grade.c_str(), verdict_counts(e).c_str());
  }
  const MachineLoadSummary load = summarize_machine_load(results);
  if (load.busy > 0) {
    const TimingResult::MachineLoad& most = *load.busiest_case->timing->machine_load;
    std::fprintf(stderr,
                 "harness: %zu of %zu timings were taken while other processes held more than a quarter of the "
                 "cores (at most %.2f of %d): their medians are slower than the code (timing.machine_load; the "
                 "report marks them \"machine busy\")\n",
                 load.busy, load.other_cores.size(), most.other_cores, most.cores);
  }
}

}  // namespace harness
