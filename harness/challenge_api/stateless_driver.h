// The case driver shared by every challenge whose ops are pure functions of
// their inputs (softmax_topk; layernorm, whose forward's saved state feeds a
// backward): it runs the challenge's ops on two seeded input sets and, for
// perf cases, times one over rotating refreshed sets. See
// docs/ARCHITECTURE.md, One evaluation loop.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/challenge_api/case_context.h"
#include "harness/challenge_api/check_report.h"
#include "harness/core/tensor.h"

namespace harness {

using HostTensors = std::map<std::string, HostTensor>;                  // the generated inputs, pristine
using TensorViews = std::map<std::string, TensorView>;                  // every tensor of a set, as the ops left it
using RefreshedElements = std::map<std::string, std::vector<int64_t>>;  // flat indices, by tensor

// One op of a case; its tensors are those its declaration names (the
// case's tensors of those names), used as it declares.
struct OpStep {
  std::string op;
  nlohmann::json scalars = nlohmann::json::object();
  // Checks this op's outputs against float64 computed from the pristine
  // inputs; may be empty (an op whose result only a later op uses).
  std::function<CheckReport(const HostTensors& inputs, const TensorViews& tensors)> check;
  // Its checked calls are watched by the peak memory witness, recorded as
  // the metric "<op>_peak_working_bytes" (CaseContext::open_peak_window).
  bool peak_memory = false;
};

struct StatelessCase {
  std::vector<TensorSpec> tensors;     // every tensor of one input set
  std::vector<std::string> generated;  // those the generator fills
  std::function<void(uint64_t seed, HostTensors& inputs)> generate;
  std::vector<OpStep> steps;  // run in this order on every set
  size_t timed_step = 0;      // perf cases: the op that is timed
  // Perf cases: changes the timed op's inputs between rounds of timed calls,
  // in place and cheaply, so that the right answer of every row changes and
  // a remembered answer is wrong. Only the tensors named in `refreshed` may
  // change, and no op before the timed one may read them (its results would
  // go stale). Its seed is CaseContext::secret_seed. It may record in
  // `changed`, by tensor, the flat indices of every element it wrote
  // (ascending): only those are then staged, where a tensor not recorded is
  // compared whole with what the submission has (InputStage).
  std::function<void(uint64_t seed, HostTensors& inputs, RefreshedElements& changed)> refresh;
  std::vector<std::string> refreshed;
  // Perf cases: checks row `row` (below `rows`) of the timed op's outputs
  // against the inputs, with the tolerances of the full check, after every
  // round of timed calls but the last (which the full check covers), so that
  // an answer replayed in any round fails.
  std::function<CheckReport(const HostTensors& inputs, const TensorViews& tensors, int64_t row)> check_row;
  int64_t rows = 0;
  // Perf cases: how many input sets the timing rotates through. 0: enough
  // that they exceed twice the device's cache, so that a bandwidth-bound op
  // reads from memory. A compute-bound op may ask for fewer (at least 2):
  // each set costs a float64 check, and the cache changes little of its time
  // (its timing is then recorded as cache warm).
  size_t timing_sets = 0;
};

void run_stateless_case(CaseContext& ctx, const StatelessCase& c);

// Keeps, for each number in `update`, the larger of it and the value in
// `worst` (other values are copied).
void merge_worst_metrics(nlohmann::json& worst, const nlohmann::json& update);

}  // namespace harness
