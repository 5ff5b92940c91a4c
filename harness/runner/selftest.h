// `harness selftest`: did every mutant and negative control get the verdict
// it declares, and did the project's own references and baselines pass?
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

struct SelftestFinding {
  std::string challenge;
  std::string submission;
  std::string device;
  std::string role;
  std::string expected;  // e.g. "wrong_answer in stability"
  std::string observed;  // verdict counts of the relevant cases
  bool ok = false;
};

std::vector<SelftestFinding> evaluate_selftest(const RunResults& results);

}  // namespace harness
