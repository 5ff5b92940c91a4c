#include "harness/runner/tolerance_justification.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "harness/core/error.h"
#include "harness/definitions/challenge_config.h"
#include "harness/results/verdict_counts.h"

namespace harness {

namespace {

const char* const kKinds[] = {"reference", "sound", "mutant"};

std::string describe_bound(const nlohmann::json& tolerance) {
  std::string text;
  for (const auto& [key, value] : tolerance.items()) {
    if (!value.is_number()) continue;
    text += fmt::format("{}{} {:g}", text.empty() ? "" : ", ", key, value.get<double>());
  }
  return text;
}

// A pass fact: the metric is within the tolerance on every case that measured it.
ToleranceFact passes(const EntryResult& e, const std::string& kind, const std::string& metric) {
  ToleranceFact f{kind, e.submission.name, e.device, "", false};
  double worst = -1;
  std::string worst_case;
  for (const auto& c : e.cases) {
    if (!c.metrics.contains(metric) || !c.metrics[metric].is_number()) continue;
    const double used = c.metrics[metric].get<double>();
    if (used > worst) {
      worst = used;
      worst_case = c.id;
    }
  }
  if (worst < 0) {
    f.observed = "measured on no case";
    return f;
  }
  f.ok = worst <= 1.0;
  f.observed =
      fmt::format("{} {:.3g} of it (worst: {})", f.ok ? "passes, using at most" : "FAILS, using", worst, worst_case);
  return f;
}

// A fail fact: the mutant is beyond the tolerance on at least `needed` cases of `suite`.
ToleranceFact fails(const EntryResult& e, const std::string& metric, Suite suite, size_t needed) {
  ToleranceFact f{"mutant", e.submission.name, e.device, "", false};
  size_t in_suite = 0, beyond = 0;
  double least = std::numeric_limits<double>::infinity(), most = 0;
  for (const auto& c : e.cases) {
    if (c.suite != suite) continue;
    ++in_suite;
    if (!c.metrics.contains(metric) || !c.metrics[metric].is_number()) continue;
    const double used = c.metrics[metric].get<double>();
    if (used <= 1.0) continue;
    ++beyond;
    least = std::min(least, used);
    most = std::max(most, used);
  }
  f.ok = beyond >= needed && needed > 0;
  const std::string how_far = beyond == 0     ? ""
                              : most >= 1e100 ? fmt::format(", {:.3g}x up to non-finite", least)
                                              : fmt::format(", {:.3g}x to {:.3g}x", least, most);
  f.observed =
      fmt::format("{} beyond it on {} of {} {} cases (needs {}){}", f.ok ? "fails," : "DOES NOT FAIL enough:", beyond,
                  in_suite, suite_name(suite), needed, how_far);
  return f;
}

// The entries of that name that ran. One unavailable on every case (a
// control whose interpreter this machine lacks, e.g. PyTorch's) is no fact,
// for or against: the selftest's table says why it did not run.
std::vector<const EntryResult*> entries_named(const RunResults& results, const std::string& challenge,
                                              const std::string& name) {
  std::vector<const EntryResult*> found;
  for (const auto& e : results.entries) {
    if (e.challenge == challenge && e.submission.name == name && ran_any_case(e)) found.push_back(&e);
  }
  return found;
}

}  // namespace

ToleranceJustification justify_tolerance(const RunResults& results, const std::string& challenge,
                                         const std::string& key, const nlohmann::json& tolerance) {
  ToleranceJustification j;
  j.challenge = challenge;
  j.tolerance = key;
  j.bound = describe_bound(tolerance);
  if (!tolerance.contains("justified_by")) return j;
  const nlohmann::json& by = tolerance["justified_by"];
  const auto where = [&] { return fmt::format("challenges/{}/challenge.json, tolerance '{}'", challenge, key); };
  try {
    j.metric = by.at("metric").get<std::string>();
    j.declared = true;
    for (const char* kind : {"references", "sound"}) {
      for (const auto& name : by.at(kind)) {
        for (const EntryResult* e : entries_named(results, challenge, name.get<std::string>())) {
          j.facts.push_back(passes(*e, kind == std::string("references") ? "reference" : "sound", j.metric));
        }
      }
    }
    for (const auto& mutant : by.at("mutants")) {
      const Suite suite = suite_from_name(mutant.value("suite", std::string("correctness")));
      const auto needed = mutant.at("cases").get<size_t>();
      for (const EntryResult* e : entries_named(results, challenge, mutant.at("name").get<std::string>())) {
        j.facts.push_back(fails(*e, j.metric, suite, needed));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    HARNESS_FAIL("{}: justified_by: {}", where(), e.what());
  } catch (const UsageError& e) {  // an unknown suite name
    HARNESS_FAIL("{}: justified_by: {}", where(), e.what());
  }
  for (const char* kind : kKinds) {
    const bool any =
        std::any_of(j.facts.begin(), j.facts.end(), [&](const ToleranceFact& f) { return f.kind == kind; });
    if (!any) j.missing.push_back(kind);
  }
  return j;
}

std::set<Suite> justification_suites(const std::string& challenge, const std::string& mutant) {
  std::set<Suite> suites;
  for (const auto& [key, tolerance] : challenge_config(challenge).tolerances.items()) {
    if (!tolerance.contains("justified_by") || !tolerance["justified_by"].contains("mutants")) continue;
    for (const auto& m : tolerance["justified_by"]["mutants"]) {
      if (m.value("name", std::string()) == mutant)
        suites.insert(suite_from_name(m.value("suite", std::string("correctness"))));
    }
  }
  return suites;
}

bool ToleranceJustification::failed() const {
  return !declared || std::any_of(facts.begin(), facts.end(), [](const ToleranceFact& f) { return !f.ok; });
}

bool ToleranceJustification::shown() const { return !failed() && missing.empty(); }

std::vector<ToleranceJustification> justify_tolerances(const RunResults& results) {
  std::set<std::string> challenges;
  for (const auto& e : results.entries) challenges.insert(e.challenge);
  std::vector<ToleranceJustification> all;
  for (const auto& challenge : challenges) {
    for (const auto& [key, tolerance] : challenge_config(challenge).tolerances.items()) {
      all.push_back(justify_tolerance(results, challenge, key, tolerance));
    }
  }
  return all;
}

}  // namespace harness
