// Progress of a run on stderr: a live status line on a terminal, plain
// lines otherwise (CI logs), and a summary at the end.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/cli/run_session.h"
#include "harness/runner/runner.h"

namespace harness {

class ProgressPrinter : public RunObserver {
 public:
  ProgressPrinter(size_t total_cases, Verbosity verbosity);
  void entry_started(const PlannedEntry& entry) override;
  void case_started(const PlannedEntry& entry, const CaseSpec& spec) override;
  void case_finished(const PlannedEntry& entry, const CaseResult& result) override;
  void entry_finished(const EntryResult& entry) override;
  void print_summary(const RunResults& results) const;

 private:
  void clear_status_line();
  std::string elapsed() const;

  size_t total_;
  size_t done_ = 0;
  size_t failures_ = 0;
  Verbosity verbosity_;
  bool terminal_;
  bool status_shown_ = false;
  int64_t start_ns_;
};

}  // namespace harness
