// Synthetic results for the tests of gate, merge and the rank test: one
// softmax_topk entry on a cpu, its cases made up, scored as a run's are.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/core/stats.h"
#include "harness/results/results.h"
#include "harness/scoring/scoring.h"

namespace harness::testing {

// A case of `suite` with `verdict`, timed by `samples` when given.
inline CaseResult make_case(const std::string& id, Suite suite, Verdict verdict, std::vector<double> samples = {}) {
  CaseResult c;
  c.id = id;
  c.suite = suite;
  c.verdict = verdict;
  c.reproduce = "harness run softmax_topk --case " + id;
  if (!samples.empty()) {
    TimingResult t;
    t.samples_ns = samples;
    t.summary = summarize(samples);
    c.timing = t;
  }
  return c;
}

// A complete run of `cases`, scored.
inline RunResults results(std::vector<CaseResult> cases, const std::string& host = "host-a",
                          const std::string& device_name = "cpu-x") {
  RunResults r;
  r.run.complete = true;
  r.run.harness_version = "0.1.0";
  r.run.host.hostname = host;
  r.run.seed = 1;
  DeviceInfo d;
  d.id = "cpu";
  d.kind = "cpu";
  d.name = device_name;
  r.devices.push_back(d);
  EntryResult e;
  e.challenge = "softmax_topk";
  e.device = "cpu";
  e.submission.name = "mine";
  e.submission.role = "submission";
  e.cases = std::move(cases);
  r.entries.push_back(e);
  score_results(r);
  return r;
}

// n timings within 1% of `center`.
inline std::vector<double> around(double center, int n = 20) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1.0 + 0.002 * ((i * 7) % 11 - 5)));
  return v;
}

}  // namespace harness::testing
