// JUnit XML read back by a real consumer (python3-junitparser, the library
// CI tools use to read and merge such files): every case a test case, with
// failures, errors and skips where the verdicts say.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "harness/results/results_json.h"
#include "support/test_support.h"

namespace harness {
namespace {

bool consumer_available() { return std::system("/usr/bin/python3 -c 'import junitparser' 2>/dev/null") == 0; }

TEST(JUnit, ARealConsumerReadsEveryCaseWithItsOutcome) {
  if (!consumer_available())
    GTEST_SKIP() << "python3-junitparser is not installed (scripts/install-deps.sh installs it)";
  testing::TempFolder tmp;
  const auto run = testing::run_cli(fmt::format(
      "run softmax_topk -s cpu-fast,cpu-mutant-rows-mixed --with-mutants --device cpu -q --suite correctness,edge "
      "--quick --seed 4 -o {} --junit {}",
      tmp.path("r.json"), tmp.path("r.xml")));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  size_t cases = 0, failures = 0;
  for (const auto& e : load_results(tmp.path("r.json")).entries) {
    for (const auto& c : e.cases) {
      ++cases;
      failures += is_failure(c.verdict);
    }
  }
  const std::string script = tmp.path("read.py");
  FILE* f = std::fopen(script.c_str(), "w");
  std::fputs(
      "import sys, junitparser\n"
      "xml = junitparser.JUnitXml.fromfile(sys.argv[1])\n"
      "cases = failures = 0\n"
      "for suite in xml:\n"
      "    for case in suite:\n"
      "        cases += 1\n"
      "        failures += any(isinstance(r, junitparser.Failure) for r in case.result)\n"
      "print(cases, failures, xml.tests, xml.failures)\n",
      f);
  std::fclose(f);
  const auto read = testing::run_shell(fmt::format("/usr/bin/python3 {} {}", script, tmp.path("r.xml")));
  ASSERT_EQ(read.exit_code, 0) << read.output;
  const std::string expected = fmt::format("{} {} {} {}", cases, failures, cases, failures);
  EXPECT_EQ(read.output.substr(0, read.output.find('\n')), expected) << read.output;
  EXPECT_GT(failures, 0u);
}

}  // namespace
}  // namespace harness
