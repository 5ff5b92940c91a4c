#include "harness/compare/gate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <optional>
#include <set>

#include "harness/compare/rank_test.h"
#include "harness/core/error.h"
#include "harness/core/format.h"

namespace harness {

namespace {

std::string where(const EntryResult& e) {
  return fmt::format("{} / {} on {}", e.challenge, e.submission.name, e.device);
}

const EntryResult* find_entry(const RunResults& r, const EntryResult& like) {
  for (const auto& e : r.entries) {
    if (e.challenge == like.challenge && e.submission.name == like.submission.name && e.device == like.device)
      return &e;
  }
  return nullptr;
}

std::string device_label(const RunResults& r, const std::string& id) {
  const DeviceInfo* d = r.device(id);
  const std::string name = d ? d->name : "?";
  // An unavailable device has no name to give.
  if (name.empty()) return fmt::format("{} (on {})", id, r.run.host.hostname);
  return fmt::format("{} ({} on {})", id, name, r.run.host.hostname);
}

// The same physical device: same name, same host.
bool same_machine(const RunResults& a, const RunResults& b, const std::string& device) {
  const DeviceInfo* da = a.device(device);
  const DeviceInfo* db = b.device(device);
  return da && db && da->name == db->name && a.run.host.hostname == b.run.host.hostname;
}

// Why entries on `device` cannot be compared (device_in_both is false).
std::string why_not_comparable(const RunResults& current, const RunResults& baseline, const std::string& device) {
  auto because = [](const DeviceInfo& d) {
    return d.unavailable_reason.empty() ? "" : " (" + d.unavailable_reason + ")";
  };
  const DeviceInfo* now = current.device(device);
  const DeviceInfo* before = baseline.device(device);
  if (!now) return "no such device in these results";
  if (!now->available) return "the device was not available for these results" + because(*now);
  if (!before) return "the baseline names no such device";
  return "the device was not available when the baseline ran" + because(*before);
}

// Verdicts and the scores without performance do not depend on which CPU or
// GPU model ran them, so a device of the same id ("cpu", "cuda") on any host
// is comparable for them; only timings need the same machine.
bool device_in_both(const RunResults& a, const RunResults& b, const std::string& device) {
  const DeviceInfo* da = a.device(device);
  const DeviceInfo* db = b.device(device);
  return da && db && da->available && db->available;
}

void compare_timing(const EntryResult& e, const CaseResult& now, const CaseResult& before, const GateOptions& o,
                    GateReport& report) {
  if (!now.timing || !before.timing) return;
  // As the scores see them: a claim below the witness's floor is not a
  // speed (a forger's fast median over its honest sum).
  const std::vector<double> a = now.timing->scored_samples_ns();
  const std::vector<double> b = before.timing->scored_samples_ns();
  if (a.size() < o.min_samples || b.size() < o.min_samples) {
    report.notes.push_back(fmt::format("{} {}: timing not compared (only {} and {} samples; at least {} needed)",
                                       where(e), now.id, a.size(), b.size(), o.min_samples));
    return;
  }
  ++report.timings_compared;
  if (before.timing->machine_load && before.timing->machine_load->busy()) ++report.busy_baseline_timings;
  const double ratio = now.timing->scored_median_ns() / before.timing->scored_median_ns();
  const double threshold = 1.0 + o.max_slowdown_percent / 100.0;
  auto median_of = [](const TimingResult& t) {
    return format_duration_ns(t.scored_median_ns()) + (t.raised_to_floor() ? " (the witness's floor)" : "");
  };
  const std::string figures = fmt::format("median {} -> {} ({:+.1f}%), n = {} / {}", median_of(*before.timing),
                                          median_of(*now.timing), 100 * (ratio - 1), b.size(), a.size());
  if (ratio > threshold) {
    const RankTest t = mann_whitney_greater(a, b);
    const auto& load = now.timing->machine_load;
    if (t.p_value < o.alpha && load && load->busy()) {
      // The machine's, maybe, not the code's: said, not failed.
      report.notes.push_back(
          fmt::format("{} {}: slower ({}; rank test p = {:.2g}), but timed while other processes held {:.2f} of "
                      "the machine's {} cores: not counted as a regression; gate a run from a quiet machine",
                      where(e), now.id, figures, t.p_value, load->other_cores, load->cores));
    } else if (t.p_value < o.alpha) {
      report.regressions.push_back(
          {"slower", where(e), now.id, fmt::format("{}; rank test p = {:.2g}", figures, t.p_value), now.reproduce});
    }
  } else if (ratio < 1.0 / threshold) {
    const RankTest t = mann_whitney_greater(b, a);
    if (t.p_value < o.alpha) {
      report.improvements.push_back(
          {"faster", where(e), now.id, fmt::format("{}; rank test p = {:.2g}", figures, t.p_value), now.reproduce});
    }
  }
}

// Weighted mean of the measured dimensions other than performance.
std::optional<double> overall_without_performance(const Scores& s) {
  double weighted = 0, weights = 0;
  for (const auto& [name, d] : s.dimensions) {
    if (name == "performance" || !d.measured || d.weight <= 0) continue;
    weighted += d.weight * d.score;
    weights += d.weight;
  }
  if (weights <= 0) return std::nullopt;
  return weighted / weights;
}

// Scores are compared without the performance dimension: it moves with
// timing noise and with the measured peak, and timing changes are judged by
// the rank tests instead. What is left (pass rates, completeness, memory)
// is deterministic for given inputs.
void compare_scores(const EntryResult& now, const EntryResult& before, const GateOptions& o, GateReport& report) {
  if (!now.scores || !before.scores) return;
  auto compare = [&](const std::string& name, double a, double b) {
    if (b - a > o.max_score_drop) {
      report.regressions.push_back({"score drop", where(now), "", fmt::format("{}: {:.1f} -> {:.1f}", name, b, a), ""});
    } else if (a - b > o.max_score_drop) {
      report.improvements.push_back(
          {"score gain", where(now), "", fmt::format("{}: {:.1f} -> {:.1f}", name, b, a), ""});
    }
  };
  const auto a = overall_without_performance(*now.scores);
  const auto b = overall_without_performance(*before.scores);
  if (a && b) compare("overall without performance", *a, *b);
  for (const auto& [name, dim] : before.scores->dimensions) {
    if (name == "performance" || !dim.measured) continue;
    const auto it = now.scores->dimensions.find(name);
    if (it != now.scores->dimensions.end() && it->second.measured) compare(name, it->second.score, dim.score);
  }
}

}  // namespace

GateReport gate_results(const RunResults& current, const RunResults& baseline, const GateOptions& o) {
  GateReport report;
  // An interrupted run judged nothing after it stopped: a case it never
  // reached cannot be shown not to have regressed.
  if (!current.run.complete && !o.allow_incomplete) {
    report.regressions.push_back({"incomplete", "the run", "",
                                  "these results say complete: false (the run was interrupted or is a shard); "
                                  "--allow-incomplete gates what it holds",
                                  ""});
  }
  std::set<std::string> compared_devices;
  std::map<std::string, std::string> skipped_devices;  // device -> why its entries were not compared
  for (const EntryResult& before : baseline.entries) {
    if (is_unranked_role(before.submission.role) || is_peer_role(before.submission.role)) continue;
    if (!device_in_both(current, baseline, before.device)) {
      skipped_devices[before.device] = why_not_comparable(current, baseline, before.device);
      continue;
    }
    compared_devices.insert(before.device);
    const bool timings_comparable = o.compare_timings && same_machine(current, baseline, before.device);
    const EntryResult* now = find_entry(current, before);
    if (!now) {
      report.regressions.push_back({"missing", where(before), "", "the submission is not in these results", ""});
      continue;
    }
    for (const CaseResult& was : before.cases) {
      const CaseResult* is = now->find_case(was.id);
      const bool passed = was.verdict == Verdict::pass;
      if (!is) {
        if (passed)
          report.regressions.push_back(
              {"missing", where(before), was.id, "passed in the baseline, not run now", was.reproduce});
        continue;
      }
      ++report.cases_compared;
      const bool passes = is->verdict == Verdict::pass;
      if (passed && !passes) {
        report.regressions.push_back({"newly failing", where(before), was.id,
                                      fmt::format("{}: {}", verdict_name(is->verdict), is->message), is->reproduce});
      } else if (!passed && passes && is_failure(was.verdict)) {
        report.improvements.push_back(
            {"now passing", where(before), was.id, fmt::format("was {}", verdict_name(was.verdict)), ""});
      } else if (passed && passes && timings_comparable) {
        compare_timing(*now, *is, was, o, report);
      }
    }
    compare_scores(*now, before, o, report);
  }
  if (compared_devices.empty()) {
    std::vector<std::string> theirs, ours;
    for (const auto& d : baseline.devices) {
      if (d.available) theirs.push_back(device_label(baseline, d.id));
    }
    for (const auto& d : current.devices) {
      if (d.available) ours.push_back(device_label(current, d.id));
    }
    throw UsageError(fmt::format("nothing to compare: the baseline ran on {} and these results on {}",
                                 fmt::join(theirs, ", "), fmt::join(ours, ", ")));
  }
  if (!o.compare_timings) {
    report.notes.insert(report.notes.begin(), "Timings were not compared (--no-timings): verdicts and scores only.");
  }
  for (const auto& device : compared_devices) {
    if (same_machine(current, baseline, device)) continue;
    report.notes.insert(
        report.notes.begin(),
        fmt::format("The baseline ran on {}, these results on {}: verdicts and scores without performance "
                    "compared{}.",
                    device_label(baseline, device), device_label(current, device),
                    o.compare_timings ? "; timings were not, since they are only comparable on the same machine" : ""));
  }
  if (report.busy_baseline_timings > 0) {
    report.notes.push_back(fmt::format(
        "{} of the {} timings compared were taken in the baseline while other processes held more than a quarter "
        "of its machine's cores: a slowdown there may not show against them.",
        report.busy_baseline_timings, report.timings_compared));
  }
  for (const auto& [device, why] : skipped_devices) {
    report.notes.push_back(
        fmt::format("Baseline entries on {} were not compared: {}.", device_label(baseline, device), why));
  }
  return report;
}

std::string render_gate_markdown(const GateReport& r, const GateOptions& o) {
  std::string out = r.regressions.empty()
                        ? fmt::format("## Gate passed: no regression ({} cases, {} timings compared)\n\n",
                                      r.cases_compared, r.timings_compared)
                        : fmt::format("## Gate failed: {} regression{}\n\n", r.regressions.size(),
                                      r.regressions.size() == 1 ? "" : "s");
  auto list = [&](const char* title, const std::vector<GateFinding>& findings) {
    if (findings.empty()) return;
    out += fmt::format("### {}\n\n", title);
    for (const auto& f : findings) {
      out += fmt::format("- **{}** {}{}: {}\n", f.what, markdown_cell(f.where),
                         f.case_id.empty() ? "" : " " + markdown_code(f.case_id), markdown_cell(f.detail, 400));
      if (!f.reproduce.empty()) out += fmt::format("  - reproduce: {}\n", markdown_code(f.reproduce));
    }
    out += "\n";
  };
  list("Regressions", r.regressions);
  list("Improvements", r.improvements);
  if (!r.notes.empty()) {
    out += "### Notes\n\n";
    for (const auto& n : r.notes) out += "- " + n + "\n";
    out += "\n";
  }
  out += fmt::format(
      "Thresholds: slower by more than {:.0f}% with a one-sided rank test p < {}, at least {} samples each; "
      "a score drop of more than {:.1f} points (scores without performance, whose changes the timing "
      "comparisons judge).\n",
      o.max_slowdown_percent, o.alpha, o.min_samples, o.max_score_drop);
  return out;
}

}  // namespace harness
