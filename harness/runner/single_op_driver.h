// The case driver shared by every challenge whose op is a pure function of
// its inputs (softmax_topk; layernorm's forward and backward each fit too).
// The challenge describes the op, how to generate inputs and how to check
// outputs; this driver does the rest, identically for all of them:
//   1. two checked calls on two input sets from different seeds (a second
//      answer equal to the first is a cached answer: stale_output);
//   2. for perf cases, timed calls rotating through enough input sets to
//      exceed the device's cache, then a check of every set's output.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/core/tensor.h"
#include "harness/runner/case_context.h"

namespace harness {

struct TensorDecl {
  TensorSpec spec;
  protocol::Access access = protocol::Access::in;
};

struct CheckReport {
  bool ok = true;
  std::string message;  // what is wrong, with the first offending elements
  // Error metrics; for numbers, larger is worse (the worst over the input
  // sets is recorded).
  nlohmann::json metrics = nlohmann::json::object();
};

using HostTensors = std::map<std::string, HostTensor>;
using OutputViews = std::map<std::string, TensorView>;

struct SingleOpCase {
  std::string op;
  nlohmann::json scalars = nlohmann::json::object();
  std::vector<TensorDecl> tensors;
  // Fills every input of `inputs` (already allocated, keyed by name).
  std::function<void(uint64_t seed, HostTensors& inputs)> generate;
  // Checks the outputs against a float64 reference computed from the
  // pristine inputs.
  std::function<CheckReport(const HostTensors& inputs, const OutputViews& outputs)> check;
};

void run_single_op_case(CaseContext& ctx, const SingleOpCase& op_case);

// Keeps, for each number in `update`, the larger of it and the value in
// `worst` (other values are copied).
void merge_worst_metrics(nlohmann::json& worst, const nlohmann::json& update);

}  // namespace harness
