// The head of each challenge's section: dimensions by submission, overall,
// grade, the winner and its margin, and a sentence per submission.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "harness/core/format.h"
#include "harness/report/markdown_helpers.h"
#include "harness/report/markdown_sections.h"
#include "harness/results/verdict_counts.h"

namespace harness::markdown {

namespace {

void winner_line(std::string& out, const Group& g) {
  std::vector<const EntryResult*> ranked;
  for (const auto* e : g.ranked) {
    if (e->scores && e->scores->ranked) ranked.push_back(e);
  }
  if (ranked.empty()) {
    out += "No ranked submission on this device.\n\n";
    return;
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const EntryResult* a, const EntryResult* b) { return a->scores->overall > b->scores->overall; });
  const auto* first = ranked[0];
  if (ranked.size() == 1) {
    out += fmt::format("**{}** is the only ranked submission: {:.1f} ({}).\n\n", markdown_cell(first->submission.name),
                       first->scores->overall, first->scores->grade);
    return;
  }
  const double margin = first->scores->overall - ranked[1]->scores->overall;
  if (margin < 0.05) {
    out += fmt::format("**No winner:** {} and {} tie at {:.1f} ({}).\n\n", markdown_cell(first->submission.name),
                       markdown_cell(ranked[1]->submission.name), first->scores->overall, first->scores->grade);
    return;
  }
  out += fmt::format("**Winner: {}** with {:.1f} ({}), ahead of {} ({:.1f}, {}) by **{:.1f} points**.\n\n",
                     markdown_cell(first->submission.name), first->scores->overall, first->scores->grade,
                     markdown_cell(ranked[1]->submission.name), ranked[1]->scores->overall, ranked[1]->scores->grade,
                     margin);
}

// A passing perf case's arithmetic rate, where its challenge counts it
// (metric "flops": compute-bound, where bandwidth says nothing of speed).
std::optional<double> flop_rate(const CaseResult& c) {
  const auto flops = c.metrics.find("flops");
  if (c.verdict != Verdict::pass || !c.timing || flops == c.metrics.end() || !flops->is_number() ||
      c.timing->scored_median_ns() <= 0)
    return std::nullopt;
  return flops->get<double>() * 1e9 / c.timing->scored_median_ns();
}

// ", N x the naive baseline" on case `c`, where the baseline passed it.
std::string versus_baseline(const EntryResult* baseline, const EntryResult* e, const CaseResult& c) {
  const CaseResult* base = baseline && baseline != e ? baseline->find_case(c.id) : nullptr;
  if (!base || base->verdict != Verdict::pass || !base->timing || !c.timing) return "";
  return fmt::format(", {:.1f}x the naive baseline", base->timing->scored_median_ns() / c.timing->scored_median_ns());
}

// One sentence per submission, every figure from the results: how many
// cases pass, what failed, and its best bandwidth (its best arithmetic rate
// where the cases count it).
void in_short(std::string& out, const Group& g) {
  const EntryResult* baseline = nullptr;
  for (const auto* e : g.ranked) {
    if (e->submission.role == "baseline") baseline = e;
  }
  out += "In short:\n\n";
  for (const auto* e : g.ranked) {
    size_t passed = 0, judged = 0;
    std::map<std::string, size_t> failed;
    const CaseResult* best = nullptr;
    const CaseResult* fastest = nullptr;  // by arithmetic rate
    double fastest_rate = 0;
    for (const auto& c : e->cases) {
      if (c.verdict == Verdict::unsupported || c.verdict == Verdict::unavailable) continue;
      ++judged;
      if (c.verdict == Verdict::pass) ++passed;
      // A harness error is not the submission's failure, but the case did not pass: listed too.
      if (is_failure(c.verdict) || c.verdict == Verdict::harness_error) ++failed[std::string(verdict_name(c.verdict))];
      if (c.verdict == Verdict::pass && c.peak_fraction && (!best || *c.peak_fraction > *best->peak_fraction))
        best = &c;
      if (const auto rate = flop_rate(c); rate && (!fastest || *rate > fastest_rate)) {
        fastest = &c;
        fastest_rate = *rate;
      }
    }
    // Name and origin come from the submission's manifest: escaped, so that
    // they cannot open a heading, a table or an HTML comment of their own.
    const std::string name = markdown_cell(e->submission.name);
    std::string sentence = fmt::format(
        "- **{}** ({}) passes {} of {} cases", name,
        markdown_cell(e->submission.origin.empty() ? e->submission.role : e->submission.origin), passed, judged);
    if (e->build.status != "ok")
      sentence = fmt::format("- **{}** did not build ({})", name, markdown_cell(e->build.status));
    if (!failed.empty()) {
      std::string list;
      for (const auto& [verdict, n] : failed) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, verdict);
      sentence += fmt::format(" (failing: {})", list);
    }
    if (fastest) {
      sentence += fmt::format("; its best rate is {} on `{}`", format_flop_rate(fastest_rate), fastest->id) +
                  versus_baseline(baseline, e, *fastest);
    } else if (best && best->bandwidth) {
      sentence += fmt::format("; its best bandwidth is {} on `{}`, {} of its roofline",
                              format_bandwidth(*best->bandwidth), best->id, format_percent(best->peak_fraction)) +
                  versus_baseline(baseline, e, *best);
    }
    out += sentence + ".\n";
  }
  out += "\n";
}
}  // namespace

void summary(std::string& out, const Group& g) {
  if (g.ranked.empty()) return;
  header_row(out, "Dimension (weight)", g.ranked);
  for (const auto& dim : dimension_names(g)) {
    double weight = 0;
    for (const auto* e : g.ranked) {
      if (e->scores && e->scores->dimensions.count(dim)) weight = e->scores->dimensions.at(dim).weight;
    }
    out += fmt::format("| {} ({:.2f}) |", dim, weight);
    for (const auto* e : g.ranked) {
      const auto* d = e->scores && e->scores->dimensions.count(dim) ? &e->scores->dimensions.at(dim) : nullptr;
      out += d && d->measured ? fmt::format(" {:.1f} <br><sub>{}</sub> |", d->score, markdown_cell(d->detail, 80))
                              : " not measured |";
    }
    out += "\n";
  }
  out += "| **Overall** |";
  for (const auto* e : g.ranked) {
    out +=
        e->scores ? fmt::format(" **{:.1f}**{} |", e->scores->overall, e->scores->capped ? " (capped)" : "") : " - |";
  }
  out += "\n| **Grade** |";
  for (const auto* e : g.ranked) out += e->scores ? fmt::format(" **{}** |", e->scores->grade) : " - |";
  out += "\n";
  std::set<std::pair<std::string, std::string>> review_rows;
  for (const auto* r : g.reviews) review_rows.emplace(r->dimension, r->reviewer);
  for (const auto& [dimension, reviewer] : review_rows) {
    out += fmt::format("| *reviewer: {}{}* |", dimension, reviewer.empty() ? "" : " (" + reviewer + ")");
    for (const auto* e : g.ranked) {
      const ReviewerScore* found = nullptr;
      for (const auto* r : g.reviews) {
        if (r->submission == e->submission.name && r->dimension == dimension && r->reviewer == reviewer) found = r;
      }
      out += found ? fmt::format(" *{:.0f}*{} |", found->score,
                                 found->note.empty() ? "" : " <br><sub>" + markdown_cell(found->note, 80) + "</sub>")
                   : " - |";
    }
    out += "\n";
  }
  out += "\n";
  if (!review_rows.empty()) {
    out += "Rows in italics are reviewer-assigned: shown for reference, never part of the measured overall.\n\n";
  }
  winner_line(out, g);
  in_short(out, g);
  bool any_note = false;
  for (const auto* e : g.ranked) {
    if (!e->scores) continue;
    for (const auto& n : e->scores->notes) {
      out += fmt::format("- {}: {}\n", markdown_cell(e->submission.name), markdown_cell(n, 1000));
      any_note = true;
    }
  }
  if (any_note) out += "\n";
}

}  // namespace harness::markdown
