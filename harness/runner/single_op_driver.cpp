#include "harness/runner/single_op_driver.h"

#include <cstring>

#include "harness/core/error.h"

namespace harness {

namespace {

// The tensors of one input set: shared tensors for the submission, and the
// pristine host copy of every input for the checks.
struct InputSet {
  std::vector<Binding> bindings;
  HostTensors inputs;
  OutputViews outputs;
};

InputSet make_set(CaseContext& ctx, const SingleOpCase& op_case, size_t index) {
  InputSet set;
  for (const TensorDecl& decl : op_case.tensors) {
    SharedTensor& shared = ctx.tensor(decl.spec);
    set.bindings.push_back(Binding{&shared, decl.access});
    if (decl.access == protocol::Access::in) {
      set.inputs.emplace(decl.spec.name, HostTensor(decl.spec));
    } else {
      set.outputs.emplace(decl.spec.name, shared.view());
    }
  }
  op_case.generate(ctx.input_seed(index), set.inputs);
  for (Binding& b : set.bindings) {
    if (b.access == protocol::Access::in) b.tensor->copy_from(set.inputs.at(b.tensor->spec().name));
  }
  return set;
}

bool same_outputs(const InputSet& a, const InputSet& b) {
  for (const auto& [name, view] : a.outputs) {
    const TensorView& other = b.outputs.at(name);
    if (std::memcmp(view.data, other.data, view.spec->bytes()) != 0) return false;
  }
  return true;
}

}  // namespace

void merge_worst_metrics(nlohmann::json& worst, const nlohmann::json& update) {
  for (const auto& [key, value] : update.items()) {
    if (value.is_number() && worst.contains(key) && worst[key].is_number()) {
      if (value.get<double>() > worst[key].get<double>()) worst[key] = value;
    } else {
      worst[key] = value;
    }
  }
}

void run_single_op_case(CaseContext& ctx, const SingleOpCase& op_case) {
  HARNESS_CHECK(op_case.generate && op_case.check, "op '{}' has no generator or checker", op_case.op);
  double set_bytes = 0;
  for (const TensorDecl& decl : op_case.tensors) set_bytes += static_cast<double>(decl.spec.bytes());
  const size_t set_count = ctx.timing_wanted() ? ctx.timing_sets(set_bytes) : 2;

  std::vector<InputSet> sets;
  sets.reserve(set_count);
  for (size_t s = 0; s < 2; ++s) sets.push_back(make_set(ctx, op_case, s));

  for (size_t s = 0; s < 2; ++s) {
    ctx.call(op_case.op, op_case.scalars, sets[s].bindings);
    const CheckReport report = op_case.check(sets[s].inputs, sets[s].outputs);
    merge_worst_metrics(ctx.metrics(), report.metrics);
    if (report.ok) continue;
    if (s == 1 && same_outputs(sets[0], sets[1])) {
      ctx.fail(Verdict::stale_output,
               "the second call, on new inputs, returned exactly the first call's outputs (a cached answer): " +
                   report.message);
    }
    ctx.fail(Verdict::wrong_answer, s == 0 ? report.message : "second call (new inputs): " + report.message);
  }
  if (!ctx.timing_wanted()) return;

  for (size_t s = 2; s < set_count; ++s) sets.push_back(make_set(ctx, op_case, s));
  std::vector<std::vector<Binding>> bindings;
  for (const auto& set : sets) bindings.push_back(set.bindings);
  ctx.time(op_case.op, op_case.scalars, bindings);
  for (size_t s = 0; s < sets.size(); ++s) {
    const CheckReport report = op_case.check(sets[s].inputs, sets[s].outputs);
    merge_worst_metrics(ctx.metrics(), report.metrics);
    if (!report.ok) {
      ctx.fail(Verdict::wrong_answer,
               fmt::format("timed repetitions, input set {} of {}: {}", s + 1, sets.size(), report.message));
    }
  }
}

}  // namespace harness
