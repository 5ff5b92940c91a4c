#include "harness/challenge_api/stateless_driver.h"

#include <algorithm>
#include <cstring>

#include "harness/core/bulk_bytes.h"
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
    const auto it =
        std::find_if(c.tensors.begin(), c.tensors.end(), [&](const TensorSpec& s) { return s.name == name; });
    HARNESS_CHECK(it != c.tensors.end(), "generated tensor '{}' is not among the case's tensors", name);
    set.inputs.emplace(name, HostTensor(*it));
  }
  c.generate(ctx.input_seed(index), set.inputs);
  // The pristine inputs the checks use stand for snapshots too: the
  // refreshes change them as they stage the same changes for the submission.
  for (auto& [name, host] : set.inputs) {
    set.shared.at(name)->copy_from(host);
    ctx.keep_pristine(*set.shared.at(name), host.raw());
  }
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

namespace {

// One stateless case as it runs: its input sets and the checks of them.
class StatelessRun {
 public:
  StatelessRun(CaseContext& ctx, const StatelessCase& c) : ctx_(ctx), c_(c) {}

  void run() {
    const size_t set_count = !ctx_.timing_wanted() ? 2
                             : c_.timing_sets > 0  ? std::max<size_t>(2, c_.timing_sets)
                                                   : ctx_.timing_sets(timed_bytes());
    if (ctx_.timing_wanted()) check_refresh(ctx_, c_);
    sets_.reserve(set_count);
    for (size_t s = 0; s < 2; ++s) sets_.push_back(make_set(ctx_, c_, s));
    // Perf cases call the ops before the timed one here, checked; the timed
    // op's first calls are the timing's warm-up, and every set is checked
    // after the timing (a checked call beforehand would only repeat, at the
    // price of a slow submission's slowest calls, what those checks show).
    run_checked_ops(ctx_.timing_wanted() ? c_.timed_step : c_.steps.size());
    if (!ctx_.timing_wanted()) return;
    for (size_t s = 2; s < set_count; ++s) add_timed_set(s);
    time_timed_op();
  }

 private:
  // Enough sets that the timed op's own tensors, rotated, exceed twice the
  // cache: sized by every tensor of the case, a timed op binding only some
  // of them (layernorm's forward) would stay warm in a large cache.
  double timed_bytes() const {
    double bytes = 0;
    for (const OpParameter* p : declared_tensors(ctx_, c_.steps[c_.timed_step])) {
      const auto it =
          std::find_if(c_.tensors.begin(), c_.tensors.end(), [&](const TensorSpec& s) { return s.name == p->name; });
      HARNESS_CHECK(it != c_.tensors.end(), "op {} declares tensor '{}', which the case does not have",
                    c_.steps[c_.timed_step].op, p->name);
      bytes += static_cast<double>(it->bytes());
    }
    return bytes;
  }

  // Each op on set 0 then set 1 before the next op starts.
  void run_checked_ops(size_t step_count) {
    for (size_t i = 0; i < step_count; ++i) {
      const OpStep& step = c_.steps[i];
      for (size_t s = 0; s < 2; ++s) {
        call_watched(step, sets_[s]);
        if (s == 1) check_not_stale(step, "the second call, on new inputs,");
        check(step, sets_[s], s == 0 ? "" : "second call (new inputs): ");
      }
    }
  }

  void call_watched(const OpStep& step, const InputSet& set) {
    const std::vector<SharedTensor*> tensors = tensors_of(ctx_, set, step);
    if (step.peak_memory) ctx_.open_peak_window();
    ctx_.call(step.op, step.scalars, tensors);
    if (!step.peak_memory) return;
    int64_t bytes = 0;
    for (const SharedTensor* t : tensors) bytes += static_cast<int64_t>(t->bytes());
    ctx_.close_peak_window(step.op + "_peak_working_bytes", bytes);
  }

  // Another input set for the timing, with the ops before the timed one run on it.
  void add_timed_set(size_t s) {
    sets_.push_back(make_set(ctx_, c_, s));
    for (size_t i = 0; i < c_.timed_step; ++i) {
      ctx_.call(c_.steps[i].op, c_.steps[i].scalars, tensors_of(ctx_, sets_[s], c_.steps[i]));
      check(c_.steps[i], sets_[s], fmt::format("input set {}: ", s + 1));
    }
  }

  void time_timed_op() {
    const OpStep& timed = c_.steps[c_.timed_step];
    std::vector<std::vector<SharedTensor*>> timed_sets;
    for (const auto& set : sets_) timed_sets.push_back(tensors_of(ctx_, set, timed));
    ctx_.time(timed.op, timed.scalars, timed_sets, [this](InputStage& stage) { next_round(stage); });
    check_not_stale(timed, "timed repetitions: input set 2");
    for (size_t s = 0; s < sets_.size(); ++s) {
      check(timed, sets_[s], fmt::format("timed repetitions, input set {} of {}: ", s + 1, sets_.size()));
    }
  }

  // Between rounds: rows no submission can foresee checked in every set,
  // then every set's refreshed inputs staged.
  void next_round(InputStage& stage) {
    ++round_;
    const OpStep& timed = c_.steps[c_.timed_step];
    for (size_t s = 0; s < sets_.size(); ++s) {
      for (size_t i = 0; i < kSpotCheckedRows; ++i) {
        const auto row = static_cast<int64_t>(ctx_.secret_index(static_cast<size_t>(c_.rows)));
        const CheckReport report = c_.check_row(sets_[s].inputs, sets_[s].views, row);
        merge_worst_metrics(ctx_.metrics(), report.metrics);
        if (report.ok) continue;
        ctx_.fail(Verdict::wrong_answer,
                  prefixed(c_, timed,
                           fmt::format("timed repetitions, round {}, input set {} of {}, row {} (a spot "
                                       "check between rounds): {}",
                                       round_, s + 1, sets_.size(), row, report.message)));
      }
      RefreshedElements changed;
      c_.refresh(ctx_.secret_seed(), sets_[s].inputs, changed);
      for (const auto& [name, elements] : changed) {
        HARNESS_CHECK(std::find(c_.refreshed.begin(), c_.refreshed.end(), name) != c_.refreshed.end(),
                      "the refresh wrote '{}', which is not among the refreshed tensors", name);
      }
      for (const std::string& name : c_.refreshed) {
        SharedTensor& shared = *sets_[s].shared.at(name);
        const void* next = sets_[s].inputs.at(name).raw();
        const auto known = changed.find(name);
        if (known == changed.end()) {
          stage.stage(shared, next);
        } else {
          if (round_ == 1) check_recorded(shared, next, known->second);
          stage.stage_elements(shared, next, known->second);
        }
      }
    }
  }

  // A refresh that records what it wrote has only that staged, and the
  // pristine inputs it changed stand for the submission's (keep_pristine):
  // an element it wrote unrecorded would be blamed on the submission as a
  // modified input. Its first round is compared whole with what the
  // submission holds (the refresh is the same code every round).
  void check_recorded(const SharedTensor& shared, const void* next, const std::vector<int64_t>& elements) const {
    const size_t element = dtype_size(shared.spec().dtype);
    const auto* now = static_cast<const unsigned char*>(shared.raw());
    const auto* then = static_cast<const unsigned char*>(next);
    if (same_bytes(now, then, shared.bytes())) return;
    for (size_t i = 0; i < shared.elements(); ++i) {
      if (std::memcmp(now + i * element, then + i * element, element) == 0) continue;
      HARNESS_CHECK(std::binary_search(elements.begin(), elements.end(), static_cast<int64_t>(i)),
                    "the refresh of '{}' wrote element {} without recording it: the submission would never be "
                    "given it",
                    shared.spec().name, i);
    }
  }

  void check(const OpStep& step, InputSet& set, const std::string& when) {
    if (!step.check) return;
    const CheckReport report = step.check(set.inputs, set.views);
    merge_worst_metrics(ctx_.metrics(), report.metrics);
    if (!report.ok) ctx_.fail(Verdict::wrong_answer, prefixed(c_, step, when + report.message));
  }

  // A cached answer: the second set's outputs are exactly the first's, and
  // wrong for the second set's inputs.
  void check_not_stale(const OpStep& step, const std::string& what) {
    if (!step.check || !same_outputs(ctx_, sets_[0], sets_[1], step)) return;
    const CheckReport report = step.check(sets_[1].inputs, sets_[1].views);
    if (!report.ok) {
      ctx_.fail(Verdict::stale_output, prefixed(c_, step,
                                                what +
                                                    " returned exactly the first set's outputs (a cached "
                                                    "answer): " +
                                                    report.message));
    }
  }

  CaseContext& ctx_;
  const StatelessCase& c_;
  std::vector<InputSet> sets_;
  uint64_t round_ = 0;
};

}  // namespace

void run_stateless_case(CaseContext& ctx, const StatelessCase& c) {
  HARNESS_CHECK(c.generate && !c.steps.empty(), "a stateless case needs a generator and at least one op");
  HARNESS_CHECK(c.timed_step < c.steps.size(), "timed step {} of {} ops", c.timed_step, c.steps.size());
  StatelessRun(ctx, c).run();
}

}  // namespace harness
