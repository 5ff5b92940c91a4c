#include "harness/challenge_api/stateless_driver.h"

#include <algorithm>
#include <cstring>

#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace harness {

namespace {

// The tensors of one input set: shared tensors for the submission, and the
// pristine host copy of every generated input for the checks.
struct InputSet {
  std::map<std::string, SharedTensor*> shared;
  HostTensors inputs;
  TensorViews views;
};

InputSet make_set(CaseContext& ctx, const StatelessCase& c, size_t index) {
  InputSet set;
  for (const TensorSpec& spec : c.tensors) {
    SharedTensor& shared = ctx.tensor(spec);
    set.shared[spec.name] = &shared;
    set.views[spec.name] = shared.view();
  }
  for (const std::string& name : c.generated) {
    const auto it = std::find_if(c.tensors.begin(), c.tensors.end(), [&](const TensorSpec& s) { return s.name == name; });
    HARNESS_CHECK(it != c.tensors.end(), "generated tensor '{}' is not among the case's tensors", name);
    set.inputs.emplace(name, HostTensor(*it));
  }
  c.generate(ctx.input_seed(index), set.inputs);
  for (const auto& [name, host] : set.inputs) set.shared.at(name)->copy_from(host);
  return set;
}

// The op's declared tensors, each with how the op uses it.
std::vector<const OpParameter*> declared_tensors(const CaseContext& ctx, const OpStep& step) {
  return ctx.ops().at(step.op).of_kind(ParameterKind::tensor);
}

std::vector<SharedTensor*> tensors_of(const CaseContext& ctx, const InputSet& set, const OpStep& step) {
  std::vector<SharedTensor*> list;
  for (const OpParameter* p : declared_tensors(ctx, step)) {
    const auto it = set.shared.find(p->name);
    HARNESS_CHECK(it != set.shared.end(), "op {} declares tensor '{}', which the case does not have", step.op, p->name);
    list.push_back(it->second);
  }
  return list;
}

// The op's checked outputs are byte-identical in both sets.
bool same_outputs(const CaseContext& ctx, const InputSet& a, const InputSet& b, const OpStep& step) {
  for (const OpParameter* p : declared_tensors(ctx, step)) {
    if (p->access != Access::out) continue;
    const SharedTensor& x = *a.shared.at(p->name);
    const SharedTensor& y = *b.shared.at(p->name);
    if (std::memcmp(x.raw(), y.raw(), x.bytes()) != 0) return false;
  }
  return true;
}

std::string prefixed(const StatelessCase& c, const OpStep& step, const std::string& message) {
  return c.steps.size() > 1 ? step.op + ": " + message : message;
}

// A perf case without a refresh could be answered from memory in every
// round but the first, and without a row check in every round but the
// last; one that refreshes what an earlier op read would leave that op's
// results (layernorm's saved state) stale.
void check_refresh(const CaseContext& ctx, const StatelessCase& c) {
  HARNESS_CHECK(c.refresh && !c.refreshed.empty(), "a timed op ({}) needs a refresh of its inputs between rounds",
                c.steps[c.timed_step].op);
  HARNESS_CHECK(c.check_row && c.rows > 0, "a timed op ({}) needs a check of its rows between rounds",
                c.steps[c.timed_step].op);
  for (const std::string& name : c.refreshed) {
    HARNESS_CHECK(std::find(c.generated.begin(), c.generated.end(), name) != c.generated.end(),
                  "refreshed tensor '{}' is not a generated input", name);
    for (size_t i = 0; i < c.timed_step; ++i) {
      for (const OpParameter* p : declared_tensors(ctx, c.steps[i])) {
        HARNESS_CHECK(p->name != name, "refreshed tensor '{}' is read by {}, which runs before the timed {}", name,
                      c.steps[i].op, c.steps[c.timed_step].op);
      }
    }
  }
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

void run_stateless_case(CaseContext& ctx, const StatelessCase& c) {
  HARNESS_CHECK(c.generate && !c.steps.empty(), "a stateless case needs a generator and at least one op");
  HARNESS_CHECK(c.timed_step < c.steps.size(), "timed step {} of {} ops", c.timed_step, c.steps.size());
  // Enough sets that the timed op's own tensors, rotated, exceed twice the
  // cache. Sized by every tensor of the case instead, a timed op binding only
  // some of them (layernorm's forward beside the backward's tensors) stayed
  // warm in a large cache, and was never judged against its speed of light.
  double timed_bytes = 0;
  for (const OpParameter* p : declared_tensors(ctx, c.steps[c.timed_step])) {
    const auto it = std::find_if(c.tensors.begin(), c.tensors.end(), [&](const TensorSpec& s) { return s.name == p->name; });
    HARNESS_CHECK(it != c.tensors.end(), "op {} declares tensor '{}', which the case does not have",
                  c.steps[c.timed_step].op, p->name);
    timed_bytes += static_cast<double>(it->bytes());
  }
  const size_t set_count = ctx.timing_wanted() ? ctx.timing_sets(timed_bytes) : 2;
  if (ctx.timing_wanted()) check_refresh(ctx, c);
  // Perf cases call the ops before the timed one here, checked; the timed
  // op's first calls are the timing's warm-up, and every set is checked
  // after the timing (a checked call beforehand would only repeat, at the
  // price of a slow submission's slowest calls, what those checks show).
  const size_t step_count = ctx.timing_wanted() ? c.timed_step : c.steps.size();

  std::vector<InputSet> sets;
  sets.reserve(set_count);
  for (size_t s = 0; s < 2; ++s) sets.push_back(make_set(ctx, c, s));

  auto check = [&](const OpStep& step, InputSet& set, const std::string& when) {
    if (!step.check) return;
    const CheckReport report = step.check(set.inputs, set.views);
    merge_worst_metrics(ctx.metrics(), report.metrics);
    if (!report.ok) ctx.fail(Verdict::wrong_answer, prefixed(c, step, when + report.message));
  };

  // A cached answer: the second set's outputs are exactly the first's, and
  // wrong for the second set's inputs.
  auto check_not_stale = [&](const OpStep& step, const std::string& what) {
    if (!step.check || !same_outputs(ctx, sets[0], sets[1], step)) return;
    const CheckReport report = step.check(sets[1].inputs, sets[1].views);
    if (!report.ok) {
      ctx.fail(Verdict::stale_output, prefixed(c, step, what + " returned exactly the first set's outputs (a cached "
                                                               "answer): " + report.message));
    }
  };

  for (size_t i = 0; i < step_count; ++i) {
    const OpStep& step = c.steps[i];
    for (size_t s = 0; s < 2; ++s) {
      ctx.call(step.op, step.scalars, tensors_of(ctx, sets[s], step));
      if (s == 1) check_not_stale(step, "the second call, on new inputs,");
      check(step, sets[s], s == 0 ? "" : "second call (new inputs): ");
    }
  }
  if (!ctx.timing_wanted()) return;

  for (size_t s = 2; s < set_count; ++s) {
    sets.push_back(make_set(ctx, c, s));
    for (size_t i = 0; i < c.timed_step; ++i) {
      ctx.call(c.steps[i].op, c.steps[i].scalars, tensors_of(ctx, sets[s], c.steps[i]));
      check(c.steps[i], sets[s], fmt::format("input set {}: ", s + 1));
    }
  }
  const OpStep& timed = c.steps[c.timed_step];
  std::vector<std::vector<SharedTensor*>> timed_sets;
  for (const auto& set : sets) timed_sets.push_back(tensors_of(ctx, set, timed));
  uint64_t round = 0;
  ctx.time(timed.op, timed.scalars, timed_sets, [&](InputStage& stage) {
    ++round;
    for (size_t s = 0; s < sets.size(); ++s) {
      for (size_t i = 0; i < kSpotCheckedRows; ++i) {
        const auto row = static_cast<int64_t>(ctx.secret_index(static_cast<size_t>(c.rows)));
        const CheckReport report = c.check_row(sets[s].inputs, sets[s].views, row);
        merge_worst_metrics(ctx.metrics(), report.metrics);
        if (!report.ok) {
          ctx.fail(Verdict::wrong_answer, prefixed(c, timed, fmt::format("timed repetitions, round {}, input set {} of {}, "
                                                                          "row {} (a spot check between rounds): {}",
                                                                          round, s + 1, sets.size(), row, report.message)));
        }
      }
      c.refresh(ctx.secret_seed(), sets[s].inputs);
      for (const std::string& name : c.refreshed) stage.stage(*sets[s].shared.at(name), sets[s].inputs.at(name).raw());
    }
  });
  check_not_stale(timed, "timed repetitions: input set 2");
  for (size_t s = 0; s < sets.size(); ++s) {
    check(timed, sets[s], fmt::format("timed repetitions, input set {} of {}: ", s + 1, sets.size()));
  }
}

}  // namespace harness
