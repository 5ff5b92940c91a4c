// What a report is rendered from: one or more results files, combined so
// that submissions of the same device stand side by side and different
// devices (or the same device id on different machines) never share a
// table, plus optional reviewer scores that are shown but never measured.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/compare/merge.h"
#include "harness/report/peer_timings.h"
#include "harness/results/results.h"

namespace harness {

// A score a person gave (code quality, design notes): shown in its own
// labelled row, never part of the measured overall.
struct ReviewerScore {
  std::string challenge;
  std::string submission;
  std::string dimension;  // e.g. "code quality"
  double score = 0;       // 0..100
  std::string reviewer;
  std::string note;
};

struct ReportInput {
  RunResults combined;             // every entry, devices qualified where needed, scored
  std::vector<NamedResults> runs;  // the inputs as given (environment, reproduce)
  std::vector<ReviewerScore> reviews;
  std::vector<PeerTimings> peers;  // other implementations' timings, shown beside ours
};

// Combines results files for a report. A device id used by two files for
// different devices or machines becomes "<id>@<host>" (then "<id>@<host>#n"),
// and a submission present twice on one device is named "<name> [<file>]".
ReportInput combine_for_report(const std::vector<NamedResults>& runs);

// {"reviews": [{"challenge", "submission", "dimension", "score", "reviewer", "note"}]};
// throws UsageError naming the file and the problem.
std::vector<ReviewerScore> load_reviewer_scores(const std::string& path);

}  // namespace harness
