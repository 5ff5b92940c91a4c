// The three facts that justify a tolerance, measured in a selftest run: our
// reference passes it, sound code written without the harness in mind passes
// it (the float32 controls, or sound code of a reduced format), and a
// realistic mutant fails it (docs/ARCHITECTURE.md, Tolerances).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

struct ToleranceFact {
  std::string kind;  // "reference", "sound" or "mutant"
  std::string submission;
  std::string device;
  std::string observed;  // "at most 0.041 of it (worst: correctness.rows4.v1000.k1)"
  bool ok = false;
};

struct ToleranceJustification {
  std::string challenge;
  std::string tolerance;  // its key in challenge.json: "probs", "dx", "fp16", ...
  std::string bound;      // "rtol 0.0003, atol 1.18e-38"
  std::string metric;
  bool declared = false;  // challenge.json says what justifies it
  std::vector<ToleranceFact> facts;
  std::vector<std::string> missing;  // kinds of fact that nothing in this run showed

  bool failed() const;  // undeclared, or a fact measured against it
  bool shown() const;   // every kind of fact shown by at least one submission, none against
};

// One justification per tolerance of every challenge in the run.
std::vector<ToleranceJustification> justify_tolerances(const RunResults& results);

// One tolerance, `tolerance` being its object in challenge.json, whose
// "justified_by" names the metric (the largest |got - float64| over the
// allowed error: 1 is the tolerance) and each fact's submissions; a mutant's
// "cases" counts the cases of its "suite" (correctness unless said) on which
// it must be beyond the tolerance. Throws HarnessError naming the file when
// "justified_by" is malformed. E.g. {"metric": "y_tolerance_used", "references": ["cpu-fast"],
//   "sound": ["float32-numpy"], "mutants": [{"name": "cpu-mutant-sample-variance", "cases": 7}]}
ToleranceJustification justify_tolerance(const RunResults& results, const std::string& challenge,
                                         const std::string& key, const nlohmann::json& tolerance);

// The suites on which `challenge`'s tolerances need `mutant` to fail (its
// entries under "justified_by"): a selftest runs a mutant on these too.
std::set<Suite> justification_suites(const std::string& challenge, const std::string& mutant);

}  // namespace harness
