// The report writers against golden files (tests/golden). Run with
// HARNESS_UPDATE_GOLDEN=1 to rewrite the expected files after an intended
// change, then review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness/core/files.h"
#include "harness/report/junit_report.h"
#include "harness/report/markdown_report.h"
#include "harness/results/results_json.h"

namespace harness {
namespace {

const std::string kGolden = std::string(HARNESS_SOURCE_DIR) + "/tests/golden/";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void expect_golden(const std::string& actual, const std::string& file) {
  const std::string path = kGolden + file;
  if (const char* update = std::getenv("HARNESS_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path) << actual;
  }
  const auto want = lines_of(read_text_file(path));
  const auto got = lines_of(actual);
  for (size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
    ASSERT_EQ(got[i], want[i]) << file << ", line " << i + 1;
  }
  ASSERT_EQ(got.size(), want.size()) << file << ": line count";
}

TEST(GoldenReport, TwoMachinesSideBySideWithReviewerScores) {
  const ReportInput input = [] {
    ReportInput in = combine_for_report(
        {{"run_a.json", load_results(kGolden + "run_a.json")}, {"run_b.json", load_results(kGolden + "run_b.json")}});
    in.reviews = load_reviewer_scores(kGolden + "reviews.json");
    return in;
  }();
  // The same device id on two hosts never shares a table.
  EXPECT_NE(input.combined.device("cpu@bench-b"), nullptr);
  expect_golden(render_markdown(input), "report_ab.md");
}

TEST(GoldenReport, JUnit) { expect_golden(render_junit(load_results(kGolden + "run_a.json")), "junit_a.xml"); }

}  // namespace
}  // namespace harness
