// `harness merge`: shards of one run (from many machines) into one result.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

struct NamedResults {
  std::string origin;  // file name, for messages
  RunResults results;
};

// Joins the entries and cases of every input and scores them again.
// Throws UsageError, naming the files, for results of different harness
// versions, seeds, commits or options (quick, device, timeout, mutants, shard
// count), of different devices under one id, or with a case present twice.
RunResults merge_results(const std::vector<NamedResults>& inputs);

}  // namespace harness
