#include <gtest/gtest.h>

#include "harness/scoring/scoring.h"

namespace harness {
namespace {

CaseResult make_case(const std::string& id, Suite suite, Verdict verdict) {
  CaseResult c;
  c.id = id;
  c.suite = suite;
  c.verdict = verdict;
  return c;
}

CaseResult perf_case(const std::string& id, double median_ns, double peak_fraction) {
  CaseResult c = make_case(id, Suite::perf, Verdict::pass);
  TimingResult t;
  t.samples_ns = {median_ns, median_ns, median_ns};
  t.summary = summarize(t.samples_ns);
  c.timing = t;
  c.peak_fraction = peak_fraction;
  c.bandwidth = 1e9;
  return c;
}

EntryResult entry(const std::string& name, const std::string& role, std::vector<CaseResult> cases) {
  EntryResult e;
  e.challenge = "softmax_topk";
  e.device = "cpu";
  e.submission.name = name;
  e.submission.role = role;
  e.cases = std::move(cases);
  return e;
}

std::vector<CaseResult> all_pass(double median_ns, double peak_fraction) {
  return {make_case("c1", Suite::correctness, Verdict::pass), make_case("c2", Suite::correctness, Verdict::pass),
          make_case("e1", Suite::edge, Verdict::pass), make_case("s1", Suite::stability, Verdict::pass),
          perf_case("p1", median_ns, peak_fraction)};
}

TEST(Grades, BoundariesOfTheSpec) {
  EXPECT_EQ(grade_for(100), "A+");
  EXPECT_EQ(grade_for(97), "A+");
  EXPECT_EQ(grade_for(96.99), "A");
  EXPECT_EQ(grade_for(93), "A");
  EXPECT_EQ(grade_for(90), "A-");
  EXPECT_EQ(grade_for(87), "B+");
  EXPECT_EQ(grade_for(83), "B");
  EXPECT_EQ(grade_for(80), "B-");
  EXPECT_EQ(grade_for(77), "C+");
  EXPECT_EQ(grade_for(76.9), "C");
  EXPECT_EQ(grade_for(73), "C");
  EXPECT_EQ(grade_for(70), "C-");
  EXPECT_EQ(grade_for(60), "D");
  EXPECT_EQ(grade_for(59.99), "F");
}

TEST(Scoring, PerfectOnEveryDimensionIsAPlus) {
  RunResults r;
  r.entries.push_back(entry("naive", "baseline", all_pass(4000, 0.1)));
  r.entries.push_back(entry("fast", "reference", all_pass(1000, 0.8)));  // 4x faster, 80% of peak
  score_results(r);
  const Scores& fast = *r.entries[1].scores;
  EXPECT_DOUBLE_EQ(fast.dimensions.at("performance").score, 100.0);
  EXPECT_DOUBLE_EQ(fast.overall, 100.0);
  EXPECT_EQ(fast.grade, "A+");
  EXPECT_TRUE(fast.ranked);
  // The baseline is 1x itself: only its bandwidth part counts (0.1/0.8 of 70).
  EXPECT_NEAR(r.entries[0].scores->dimensions.at("performance").score, 70.0 * 0.125, 1e-9);
}

TEST(Scoring, AFailedCoreCaseCapsTheOverallAtC) {
  auto cases = all_pass(1000, 0.8);
  cases[0].verdict = Verdict::wrong_answer;
  const Scores s = score_entry(entry("fast", "submission", cases), nullptr);
  EXPECT_TRUE(s.capped);
  EXPECT_LE(s.overall, kFailedCoreCap);
  EXPECT_EQ(s.grade, "C");
  EXPECT_DOUBLE_EQ(s.dimensions.at("correctness").score, 50.0);
}

// The exploit: a submission that provokes harness_error on the cases it
// fails (a malformed reply, an unreadable output). Left out of the pass
// rates and the cap, such cases used to leave it at A+.
TEST(Scoring, AHarnessErrorNeverCountsAsPassed) {
  auto cases = all_pass(1000, 0.8);
  cases[0].verdict = Verdict::harness_error;
  cases[2].verdict = Verdict::harness_error;  // edge
  cases[4].verdict = Verdict::harness_error;  // perf
  const Scores s = score_entry(entry("fast", "submission", cases), nullptr);
  EXPECT_DOUBLE_EQ(s.dimensions.at("correctness").score, 50.0);
  EXPECT_DOUBLE_EQ(s.dimensions.at("edge_cases").score, 0.0);
  EXPECT_DOUBLE_EQ(s.dimensions.at("performance").score, 0.0);
  EXPECT_TRUE(s.capped);
  EXPECT_LE(s.overall, kFailedCoreCap);
  EXPECT_NE(s.grade, "A+");
  bool noted = false;
  for (const auto& n : s.notes) noted = noted || n.find("3 case(s) lost to a harness error") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Scoring, UnsupportedCostsCompletenessNotCorrectness) {
  auto cases = all_pass(1000, 0.8);
  cases.push_back(make_case("e2", Suite::edge, Verdict::unsupported));
  const Scores s = score_entry(entry("fast", "submission", cases), nullptr);
  EXPECT_DOUBLE_EQ(s.dimensions.at("edge_cases").score, 100.0);
  EXPECT_NEAR(s.dimensions.at("completeness").score, 100.0 * 5 / 6, 1e-9);
  EXPECT_FALSE(s.capped);
}

// Declining the perf cases where it is slow once left them out of the
// performance score (and, all declined, left performance unmeasured and out
// of the overall), for the completeness of a few cases.
TEST(Scoring, AnUnsupportedPerfCaseScoresZeroPerformance) {
  auto cases = all_pass(1000, 0.8);
  cases.push_back(make_case("p2", Suite::perf, Verdict::unsupported));
  const Scores s = score_entry(entry("fast", "submission", cases), nullptr);
  EXPECT_DOUBLE_EQ(s.dimensions.at("performance").score, 50.0);
  EXPECT_NE(s.dimensions.at("performance").detail.find("1 declared unsupported, scored 0"), std::string::npos);

  auto declined = all_pass(1000, 0.8);
  declined.back().verdict = Verdict::unsupported;
  declined.back().timing.reset();
  const Scores all_declined = score_entry(entry("slow", "submission", declined), nullptr);
  EXPECT_TRUE(all_declined.dimensions.at("performance").measured);
  EXPECT_DOUBLE_EQ(all_declined.dimensions.at("performance").score, 0.0);
  EXPECT_LT(all_declined.overall, 90.0);
}

// cpu-reserve-max-length's understated_memory case kept the readings taken
// before the one that failed it, and they counted as full memory marks.
TEST(Scoring, MemoryOfACaseThatDidNotPassScoresZero) {
  auto kv_case = [](Verdict verdict) {
    CaseResult c = make_case("m", Suite::correctness, verdict);
    c.metrics["memory_overhead"] = 1.0;
    c.metrics["capacity_tokens"] = 100.0;
    c.metrics["capacity_ideal_tokens"] = 100.0;
    return c;
  };
  EntryResult kv = entry("cache", "submission", {kv_case(Verdict::pass), kv_case(Verdict::understated_memory)});
  kv.challenge = "kv_cache";
  const Scores s = score_entry(kv, nullptr);
  EXPECT_DOUBLE_EQ(s.dimensions.at("memory").score, 50.0);
  EXPECT_DOUBLE_EQ(s.dimensions.at("capacity").score, 0.0);  // the last capacity reading did not pass

  auto ln_case = [](Verdict verdict) {
    CaseResult c = make_case("m", Suite::correctness, verdict);
    c.metrics["saved_state_bytes"] = 8.0;
    c.metrics["minimum_saved_state_bytes"] = 8.0;
    return c;
  };
  EntryResult ln = entry("norm", "submission", {ln_case(Verdict::pass), ln_case(Verdict::understated_memory)});
  ln.challenge = "layernorm_backward";
  EXPECT_DOUBLE_EQ(score_entry(ln, nullptr).dimensions.at("memory").score, 50.0);
}

TEST(Scoring, WithoutABaselinePerformanceIsBandwidthAloneAndSaysSo) {
  const Scores s = score_entry(entry("fast", "submission", all_pass(1000, 0.4)), nullptr);
  EXPECT_DOUBLE_EQ(s.dimensions.at("performance").score, 50.0);
  bool noted = false;
  for (const auto& n : s.notes) noted = noted || n.find("bandwidth alone") != std::string::npos;
  EXPECT_TRUE(noted);
}

// attention gives bandwidth no share of its performance (compute-bound): run
// without its baseline, cpu-fast's perf cases scored on bandwidth alone gave
// 6.4, and a sound kernel a C+ overall. Such a case is now not scored.
TEST(Scoring, WhereBandwidthHasNoShareACaseWithoutABaselineIsNotScored) {
  EntryResult alone = entry("fast", "submission", all_pass(1000, 0.05));
  alone.challenge = "attention";
  const Scores s = score_entry(alone, nullptr);
  EXPECT_FALSE(s.dimensions.at("performance").measured);
  bool noted = false;
  for (const auto& n : s.notes) noted = noted || n.find("1 of 1 perf cases not scored") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_DOUBLE_EQ(s.overall, 100.0);  // every measured dimension is perfect

  EntryResult baseline = entry("naive", "baseline", all_pass(4000, 0.01));
  baseline.challenge = "attention";
  EXPECT_DOUBLE_EQ(score_entry(alone, &baseline).dimensions.at("performance").score, 100.0);  // 4x: full marks

  // A failing perf case still scores 0: not scored is no refuge for the others.
  EntryResult failing = alone;
  failing.cases.push_back(make_case("p2", Suite::perf, Verdict::wrong_answer));
  EXPECT_TRUE(score_entry(failing, nullptr).dimensions.at("performance").measured);
  EXPECT_DOUBLE_EQ(score_entry(failing, nullptr).dimensions.at("performance").score, 0.0);
}

TEST(Scoring, MutantsAndImpossibleSpeedsAreNeverRanked) {
  EXPECT_FALSE(score_entry(entry("m", "mutant", all_pass(1000, 0.5)), nullptr).ranked);
  EXPECT_FALSE(score_entry(entry("c", "control", all_pass(1000, 0.5)), nullptr).ranked);
  auto cases = all_pass(1000, 0.5);
  cases.back().verdict = Verdict::impossible_speed;
  EXPECT_FALSE(score_entry(entry("cheat", "submission", cases), nullptr).ranked);
}

TEST(Scoring, ABuildFailureScoresZero) {
  std::vector<CaseResult> cases;
  for (Suite s : all_suites()) cases.push_back(make_case("x", s, Verdict::build_failed));
  const Scores s = score_entry(entry("broken", "submission", cases), nullptr);
  EXPECT_DOUBLE_EQ(s.overall, 0.0);
  EXPECT_EQ(s.grade, "F");
  EXPECT_DOUBLE_EQ(s.dimensions.at("completeness").score, 0.0);
}

// A CUDA submission on a machine without a GPU: nothing was judged, so no
// score (a 0.0 F would read as judged and lost), while a failed build still
// scores zero.
TEST(Scoring, AnEntryWithNothingJudgedGetsNoScore) {
  RunResults r;
  std::vector<CaseResult> not_run, broken;
  for (Suite s : all_suites()) not_run.push_back(make_case("x", s, Verdict::unavailable));
  for (Suite s : all_suites()) broken.push_back(make_case("x", s, Verdict::build_failed));
  r.entries = {entry("not-run", "submission", not_run), entry("broken", "submission", broken)};
  score_results(r);
  EXPECT_FALSE(r.entries[0].scores.has_value());
  ASSERT_TRUE(r.entries[1].scores.has_value());
  EXPECT_EQ(r.entries[1].scores->grade, "F");
}

TEST(Scoring, DimensionsNotRunAreLeftOutOfTheOverall) {
  const Scores s =
      score_entry(entry("fast", "submission", {make_case("c1", Suite::correctness, Verdict::pass)}), nullptr);
  EXPECT_FALSE(s.dimensions.at("performance").measured);
  EXPECT_DOUBLE_EQ(s.overall, 100.0);
}

}  // namespace
}  // namespace harness
