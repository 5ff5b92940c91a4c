#include "check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "harness/core/parallel.h"
#include "softmax_topk/softmax_topk_reference.h"

namespace softmax_topk {

namespace {

enum Problem { out_of_range, duplicate, not_top_k, out_of_order, prob_out_of_order, prob_error, kProblems };

const char* const kProblemNames[kProblems] = {
    "indices outside [0, vocab)",           "repeated indices",
    "rows whose chosen set is not a top-k", "chosen logits not in non-increasing order",
    "probabilities increasing along k",     "probabilities beyond atol + rtol*|float64|"};

struct Findings {
  std::array<size_t, kProblems> count{};
  std::array<std::string, kProblems> first;
  double max_abs = 0;
  double max_rel = 0;
  double squared_error = 0;
  double squared_reference = 0;
  double worst_excess = 0;    // error / bound of the worst violating probability
  double tolerance_used = 0;  // error / bound of the worst probability, violating or not

  void note(Problem p, const std::string& example) {
    if (count[p]++ == 0) first[p] = example;
  }
  void merge(const Findings& o) {
    for (int p = 0; p < kProblems; ++p) {
      if (count[p] == 0 && o.count[p] > 0) first[p] = o.first[p];
      count[p] += o.count[p];
    }
    max_abs = std::max(max_abs, o.max_abs);
    max_rel = std::max(max_rel, o.max_rel);
    tolerance_used = std::max(tolerance_used, o.tolerance_used);
    squared_error += o.squared_error;
    squared_reference += o.squared_reference;
    if (o.worst_excess > worst_excess) {
      worst_excess = o.worst_excess;
      if (o.count[prob_error]) first[prob_error] = o.first[prob_error];
    }
  }
};

// Checks one row; `stamp` marks chosen columns with the row number.
void check_row(const TopkCase& c, int64_t r, const float* x, const float* p, const int32_t* idx, const Tolerance& tol,
               std::vector<int64_t>& stamp, Findings& f) {
  bool valid_indices = true;
  for (int64_t j = 0; j < c.k; ++j) {
    const int32_t i = idx[j];
    if (i < 0 || i >= c.vocab) {
      f.note(out_of_range, fmt::format("row {}, position {}: index {}", r, j, i));
      valid_indices = false;
    } else if (stamp[static_cast<size_t>(i)] == r) {
      f.note(duplicate, fmt::format("row {}: column {} appears twice", r, i));
      valid_indices = false;
    } else {
      stamp[static_cast<size_t>(i)] = r;
    }
  }
  if (!valid_indices) return;  // the rest presumes k distinct columns

  int64_t min_position = 0;
  for (int64_t j = 1; j < c.k; ++j) {
    if (x[idx[j]] < x[idx[min_position]]) min_position = j;
  }
  float max_left_out = -std::numeric_limits<float>::infinity();
  int64_t max_left_out_column = -1;
  for (int64_t i = 0; i < c.vocab; ++i) {
    if (stamp[static_cast<size_t>(i)] != r && (max_left_out_column < 0 || x[i] > max_left_out)) {
      max_left_out = x[i];
      max_left_out_column = i;
    }
  }
  if (max_left_out_column >= 0 && max_left_out > x[idx[min_position]]) {
    f.note(not_top_k,
           fmt::format("row {}: column {} (logit {:.9g}) was left out but column {} (logit {:.9g}) was chosen", r,
                       max_left_out_column, max_left_out, idx[min_position], x[idx[min_position]]));
  }
  for (int64_t j = 0; j + 1 < c.k; ++j) {
    if (x[idx[j + 1]] > x[idx[j]]) {
      f.note(out_of_order,
             fmt::format("row {}: position {} has logit {:.9g} after {:.9g}", r, j + 1, x[idx[j + 1]], x[idx[j]]));
      break;
    }
  }

  const double lse = reference::log_sum_exp(x, c.vocab);
  for (int64_t j = 0; j < c.k; ++j) {
    const double ref = reference::softmax_at(x, idx[j], lse);
    const double got = p[j];
    const double error = std::isfinite(got) ? std::fabs(got - ref) : std::numeric_limits<double>::infinity();
    const double bound = tol.atol + tol.rtol * ref;
    f.tolerance_used = std::max(f.tolerance_used, error / bound);
    f.max_abs = std::max(f.max_abs, error);
    if (ref > tol.atol) f.max_rel = std::max(f.max_rel, error / ref);
    f.squared_error += std::isfinite(error) ? error * error : std::numeric_limits<double>::infinity();
    f.squared_reference += ref * ref;
    if (!(error <= bound)) {
      const double excess = error / bound;
      f.note(prob_error, "");
      if (excess > f.worst_excess || f.count[prob_error] == 1) {
        f.worst_excess = std::max(f.worst_excess, excess);
        f.first[prob_error] = fmt::format(
            "worst at row {}, position {} (column {}): {:.9g} vs float64 {:.9g} (error {:.3g}, allowed {:.3g})", r, j,
            idx[j], got, ref, error, bound);
      }
    }
    if (j + 1 < c.k && std::isfinite(got) && p[j + 1] > got + tol.atol + tol.rtol * got) {
      f.note(prob_out_of_order,
             fmt::format("row {}: prob {:.9g} at position {} after {:.9g}", r, p[j + 1], j + 1, got));
    }
  }
}

}  // namespace

harness::CheckReport check_answer(const TopkCase& c, const float* logits, const float* probs, const int32_t* indices,
                                  const Tolerance& tolerance) {
  Findings total;
  std::mutex merge_mutex;
  harness::parallel_for(static_cast<size_t>(c.rows), [&](size_t begin, size_t end) {
    Findings local;
    std::vector<int64_t> stamp(static_cast<size_t>(c.vocab), -1);
    for (size_t r = begin; r < end; ++r) {
      const auto row = static_cast<int64_t>(r);
      check_row(c, row, logits + row * c.vocab, probs + row * c.k, indices + row * c.k, tolerance, stamp, local);
    }
    std::lock_guard<std::mutex> lock(merge_mutex);
    total.merge(local);
  });

  harness::CheckReport report;
  report.metrics = {
      {"probs_max_abs_error", total.max_abs},
      {"probs_max_rel_error", total.max_rel},
      {"probs_normwise_rel_error",
       total.squared_reference > 0 ? std::sqrt(total.squared_error / total.squared_reference) : 0.0},
      {tolerance.name + "_tolerance_used", std::isfinite(total.tolerance_used) ? total.tolerance_used : 1e300},
      {"probs_rtol", tolerance.rtol},
      {"probs_atol", tolerance.atol}};
  std::string message;
  size_t violations = 0;
  for (int p = 0; p < kProblems; ++p) {
    if (total.count[p] == 0) continue;
    violations += total.count[p];
    const bool per_row = p == not_top_k || p == out_of_order;
    const auto out_of = static_cast<size_t>(per_row ? c.rows : c.rows * c.k);
    message += fmt::format("{}{}: {} of {} {}; {}", message.empty() ? "" : "; ", kProblemNames[p], total.count[p],
                           out_of, per_row ? "rows" : "outputs", total.first[p]);
  }
  report.metrics["violations"] = violations;
  report.ok = violations == 0;
  report.message = message;
  return report;
}

}  // namespace softmax_topk
