#include "harness/scoring/scoring.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/challenge_api/challenge.h"
#include "harness/core/error.h"

namespace harness {

namespace {

// Cases that judge the submission: all but those it declared unsupported
// and those that could not run here. A case lost to a harness error is
// judged and did not pass: a case that did not pass never counts as passed,
// whoever is to blame, so provoking a harness error never helps a score.
bool judged(Verdict v) { return v != Verdict::unsupported && v != Verdict::unavailable; }

// Fails a core case for the cap: any failure, and a harness error too.
bool fails_core(Verdict v) { return is_failure(v) || v == Verdict::harness_error; }

bool supported(Verdict v) {
  return v != Verdict::unsupported && v != Verdict::build_failed && v != Verdict::unavailable;
}

DimensionScore pass_rate(const EntryResult& entry, Suite suite) {
  DimensionScore d;
  size_t total = 0, judged_count = 0, passed = 0, unsupported = 0;
  for (const auto& c : entry.cases) {
    if (c.suite != suite) continue;
    ++total;
    if (c.verdict == Verdict::unsupported) ++unsupported;
    if (!judged(c.verdict)) continue;
    ++judged_count;
    if (c.verdict == Verdict::pass) ++passed;
  }
  d.measured = total > 0;
  d.score = judged_count ? 100.0 * static_cast<double>(passed) / static_cast<double>(judged_count) : 0.0;
  d.detail = fmt::format("{}/{} cases pass", passed, judged_count);
  if (unsupported) d.detail += fmt::format(", {} unsupported", unsupported);
  return d;
}

// Stability is graded, not only passed: a case whose check measured its
// precision (metric "precision_loss", see error_metrics.h) scores 100 at the
// float64 ideal and 50 at the bound of sound float32 arithmetic, on a log
// scale between; a failed case scores 0. The tier names the worst case.
constexpr double kFloat64GradeLoss = 0.25;

DimensionScore graded_stability(const EntryResult& entry) {
  DimensionScore d = pass_rate(entry, Suite::stability);
  double sum = 0, worst_loss = 0;
  size_t judged_count = 0, graded = 0;
  bool failed = false;
  for (const auto& c : entry.cases) {
    if (c.suite != Suite::stability || !judged(c.verdict)) continue;
    ++judged_count;
    if (c.verdict != Verdict::pass) {
      failed = true;
      continue;
    }
    const double loss = std::clamp(c.metrics.value("precision_loss", 0.0), 0.0, 1.0);
    if (c.metrics.contains("precision_loss")) ++graded;
    worst_loss = std::max(worst_loss, loss);
    sum += 100.0 - 50.0 * loss;
  }
  if (judged_count == 0 || graded == 0) return d;
  d.score = sum / static_cast<double>(judged_count);
  const char* tier = failed                            ? "beyond float32 on some input"
                     : worst_loss <= kFloat64GradeLoss ? "float64-grade"
                                                       : "float32-sound";
  d.detail += fmt::format("; {}, precision loss {:.2f}", tier, worst_loss);
  return d;
}

// A perf case declared unsupported scores 0 like a failing one: left out,
// declining the shapes where a submission is slow would raise its
// performance far more than the completeness it costs. A passing case with
// no baseline timing to compare is scored on bandwidth alone; where the
// challenge gives bandwidth no share (compute-bound), it is left out
// instead, as not measured: its bandwidth says nothing of its speed.
DimensionScore performance(const EntryResult& entry, const EntryResult* baseline, const PerformanceScoring& p,
                           std::vector<std::string>& notes) {
  DimensionScore d;
  double sum = 0;
  size_t counted = 0, with_speedup = 0, unsupported = 0, unmeasured = 0;
  for (const auto& c : entry.cases) {
    if (c.suite != Suite::perf || c.verdict == Verdict::unavailable) continue;
    ++counted;
    if (c.verdict == Verdict::unsupported) ++unsupported;
    if (c.verdict != Verdict::pass || !c.timing) continue;  // a failing or unsupported perf case scores 0
    const double bandwidth_part =
        c.peak_fraction ? std::clamp(*c.peak_fraction / p.full_marks_peak_fraction, 0.0, 1.0) : 0.0;
    const CaseResult* base = baseline ? baseline->find_case(c.id) : nullptr;
    if (base && base->verdict == Verdict::pass && base->timing && c.timing->scored_median_ns() > 0) {
      const double speedup = base->timing->scored_median_ns() / c.timing->scored_median_ns();
      const double speed_part = std::clamp(std::log(speedup) / std::log(p.full_marks_speedup), 0.0, 1.0);
      sum += 100.0 * (p.bandwidth_share * bandwidth_part + (1.0 - p.bandwidth_share) * speed_part);
      ++with_speedup;
    } else if (p.bandwidth_share > 0) {
      sum += 100.0 * bandwidth_part;
    } else {
      ++unmeasured;
    }
  }
  const size_t scored = counted - unmeasured;
  d.measured = scored > 0;
  d.score = scored ? sum / static_cast<double>(scored) : 0.0;
  d.detail = fmt::format("{} perf cases; full marks at {:.0f}% of each case's roofline and {:.0f}x the baseline",
                         counted, 100 * p.full_marks_peak_fraction, p.full_marks_speedup);
  if (unsupported) d.detail += fmt::format("; {} declared unsupported, scored 0", unsupported);
  if (unmeasured) {
    d.detail += fmt::format("; {} not scored", unmeasured);
    notes.push_back(
        fmt::format("performance: {} of {} perf cases not scored (the score is the speed-up over the baseline, "
                    "and no passing baseline timing of the same case is in these results: run the baseline too)",
                    unmeasured, counted));
  } else if (counted && with_speedup < counted - unsupported) {
    notes.push_back(
        fmt::format("performance: {} of {} perf cases scored on bandwidth alone (no passing baseline "
                    "timing of the same case in these results)",
                    counted - unsupported - with_speedup, counted));
  }
  return d;
}

DimensionScore completeness(const EntryResult& entry) {
  DimensionScore d;
  size_t total = 0, ok = 0;
  for (const auto& c : entry.cases) {
    ++total;  // a harness error was not declared unsupported
    if (supported(c.verdict)) ++ok;
  }
  d.measured = total > 0;
  d.score = total ? 100.0 * static_cast<double>(ok) / static_cast<double>(total) : 0.0;
  d.detail = fmt::format("{}/{} cases supported", ok, total);
  return d;
}

}  // namespace

std::string grade_for(double overall) {
  struct Step {
    double min;
    const char* grade;
  };
  static const Step steps[] = {{97, "A+"}, {93, "A"},  {90, "A-"}, {87, "B+"}, {83, "B"},
                               {80, "B-"}, {77, "C+"}, {73, "C"},  {70, "C-"}, {60, "D"}};
  for (const Step& s : steps) {
    if (overall >= s.min) return s.grade;
  }
  return "F";
}

Scores score_entry(const EntryResult& entry, const EntryResult* baseline) {
  const Challenge& challenge = find_challenge(entry.challenge);
  const ChallengeConfig& config = challenge.config();
  Scores s;
  s.dimensions["correctness"] = pass_rate(entry, Suite::correctness);
  s.dimensions["edge_cases"] = pass_rate(entry, Suite::edge);
  s.dimensions["stability"] = graded_stability(entry);
  s.dimensions["performance"] = performance(entry, baseline, config.performance, s.notes);
  s.dimensions["completeness"] = completeness(entry);
  for (auto& [name, d] : challenge.extra_dimensions(entry)) s.dimensions[name] = d;

  double weighted = 0, weights = 0;
  for (auto& [name, d] : s.dimensions) {
    const auto w = config.weights.find(name);
    d.weight = w == config.weights.end() ? 0.0 : w->second;
    if (!d.measured || d.weight <= 0) continue;
    weighted += d.weight * d.score;
    weights += d.weight;
  }
  for (const auto& [name, w] : config.weights) {
    if (w > 0 && (!s.dimensions.count(name) || !s.dimensions[name].measured)) {
      s.notes.push_back(fmt::format("{} not measured in this run; the overall uses the other dimensions", name));
    }
  }
  s.overall = weights > 0 ? weighted / weights : 0.0;

  size_t failed_core = 0, harness_errors = 0, impossible = 0;
  for (const auto& c : entry.cases) {
    if (c.suite == Suite::correctness && fails_core(c.verdict)) ++failed_core;
    if (c.verdict == Verdict::harness_error) ++harness_errors;
    if (c.verdict == Verdict::impossible_speed) ++impossible;
  }
  if (failed_core > 0) {
    s.capped = true;
    if (s.overall > kFailedCoreCap) s.overall = kFailedCoreCap;
    s.notes.push_back(fmt::format("{} core correctness case(s) failed: overall held to C at most", failed_core));
  }
  if (harness_errors) {
    s.notes.push_back(fmt::format("{} case(s) lost to a harness error: counted as not passed", harness_errors));
  }
  s.grade = grade_for(s.overall);
  s.ranked = !is_unranked_role(entry.submission.role) && !is_peer_role(entry.submission.role) && impossible == 0;
  if (impossible) s.notes.push_back(fmt::format("{} case(s) faster than physically possible: not ranked", impossible));
  return s;
}

void score_results(RunResults& results) {
  std::map<std::pair<std::string, std::string>, const EntryResult*> baselines;
  for (const auto& e : results.entries) {
    if (e.submission.role == "baseline") baselines.emplace(std::make_pair(e.challenge, e.device), &e);
  }
  for (auto& e : results.entries) {
    // Nothing judged (every case unavailable: no device, no interpreter):
    // no score, rather than a 0.0 F that reads as judged and lost.
    const bool judged = std::any_of(e.cases.begin(), e.cases.end(),
                                    [](const CaseResult& c) { return c.verdict != Verdict::unavailable; });
    if (!judged) {
      e.scores.reset();
      continue;
    }
    const auto it = baselines.find({e.challenge, e.device});
    e.scores = score_entry(e, it == baselines.end() ? nullptr : it->second);
  }
}

}  // namespace harness
