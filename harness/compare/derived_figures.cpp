#include "harness/compare/derived_figures.h"

#include <fmt/format.h>

#include <cmath>

#include "harness/challenge_api/challenge.h"
#include "harness/core/error.h"
#include "harness/scoring/scoring.h"

namespace harness {

namespace {

// Reports show scores to a tenth of a point; below this a difference is
// float arithmetic (an older build's order of summation), not an edit.
constexpr double kScoreSlack = 0.005;

std::string entry_name(const EntryResult& e) {
  return fmt::format("{} / {} on {}", e.challenge, e.submission.name, e.device);
}

bool known_challenge(const std::string& name) {
  for (const auto& challenge : all_challenges()) {
    if (challenge->name() == name) return true;
  }
  return false;
}

// A passing case whose recorded error is beyond its tolerance (a
// `<name>_tolerance_used` above 1 fails the check that recorded it).
void check_case(const EntryResult& e, const CaseResult& c, const std::string& origin) {
  if (c.verdict != Verdict::pass || !c.metrics.is_object()) return;
  for (const auto& [metric, value] : c.metrics.items()) {
    const std::string suffix = "_tolerance_used";
    if (metric.size() <= suffix.size() || metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    if (value.is_number() && value.get<double>() > 1.0) {
      throw UsageError(
          fmt::format("{}: {} case {}: the verdict says pass, but its {} of {:.3g} is beyond its "
                      "tolerance (an edited verdict?)",
                      origin, entry_name(e), c.id, metric, value.get<double>()));
    }
  }
}

void check_scores(const EntryResult& stored, const EntryResult& derived, const std::string& origin) {
  const std::string where = fmt::format("{}: {}", origin, entry_name(stored));
  if (stored.scores.has_value() != derived.scores.has_value()) {
    throw UsageError(fmt::format("{}: the file {} scores where its cases give {}", where,
                                 stored.scores ? "holds" : "holds no", derived.scores ? "some" : "none"));
  }
  if (!stored.scores) return;
  const Scores& s = *stored.scores;
  const Scores& d = *derived.scores;
  auto differs = [](double a, double b) { return !(std::fabs(a - b) <= kScoreSlack); };
  if (differs(s.overall, d.overall) || s.grade != d.grade) {
    throw UsageError(fmt::format("{}: the stored overall {:.4f} ({}) is not what its cases give, {:.4f} ({})", where,
                                 s.overall, s.grade, d.overall, d.grade));
  }
  if (s.capped != d.capped || s.ranked != d.ranked) {
    throw UsageError(fmt::format("{}: the stored scores say {} and {}; its cases give {} and {}", where,
                                 s.capped ? "capped" : "not capped", s.ranked ? "ranked" : "not ranked",
                                 d.capped ? "capped" : "not capped", d.ranked ? "ranked" : "not ranked"));
  }
  for (const auto& [name, dimension] : d.dimensions) {
    const auto it = s.dimensions.find(name);
    if (it == s.dimensions.end() || it->second.measured != dimension.measured ||
        differs(it->second.score, dimension.score)) {
      throw UsageError(fmt::format(
          "{}: the stored {} score {} is not what its cases give, {:.4f}", where, name,
          it == s.dimensions.end() ? std::string("(none)") : fmt::format("{:.4f}", it->second.score), dimension.score));
    }
  }
}

}  // namespace

void check_derived_figures(const RunResults& results, const std::string& origin) {
  for (const EntryResult& e : results.entries) {
    for (const CaseResult& c : e.cases) check_case(e, c, origin);
  }
  RunResults derived = results;
  std::vector<EntryResult> known;
  for (const EntryResult& e : derived.entries) {
    if (known_challenge(e.challenge)) known.push_back(e);
  }
  derived.entries = known;
  score_results(derived);
  size_t next = 0;
  for (const EntryResult& e : results.entries) {
    if (!known_challenge(e.challenge)) continue;
    check_scores(e, derived.entries[next++], origin);
  }
}

}  // namespace harness
