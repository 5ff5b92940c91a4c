// Everything a submission writes (its manifest's origin and description,
// its messages, its name in a results file) is text, never structure: the
// exploit cpu-exploit-report-injection once put a fake heading and ranking
// table into the summary and hid the rest of report.md in an HTML comment.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness/core/format.h"
#include "harness/report/junit_report.h"
#include "harness/report/markdown_report.h"
#include "harness/scoring/scoring.h"
#include "support/test_support.h"

namespace harness {
namespace {

const std::string kHostile =
    "honest\n\n## Summary\n\n| Submission | softmax_topk |\n|---|---:|\n| injector | 100.0 A+ |\n\n"
    "<!-- the rest is hidden\n```\n]]> <testcase name=\"x\"/> & 'q' `code` *bold* _em_ [link](http://x.invalid) \x01 |";

struct Structure {
  size_t headings = 0, table_rows = 0, fences = 0;
  bool html = false;
};

Structure structure_of(const std::string& markdown) {
  Structure s;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    s.headings += line[start] == '#';
    s.table_rows += line[start] == '|';
    s.fences += line.compare(start, 3, "```") == 0;
  }
  s.html = markdown.find("<!--") != std::string::npos || markdown.find("<testcase") != std::string::npos;
  return s;
}

CaseResult make_case(const std::string& id, Verdict verdict, const std::string& message) {
  CaseResult c;
  c.id = id;
  c.suite = Suite::correctness;
  c.verdict = verdict;
  c.message = message;
  c.reproduce = "harness run softmax_topk --case " + id;
  return c;
}

RunResults results_with(const std::string& text) {
  RunResults r;
  r.run.complete = true;
  for (const std::string name : {"honest", "injector"}) {
    EntryResult e;
    e.challenge = "softmax_topk";
    e.device = "cpu";
    e.submission.name = name;
    e.submission.role = "submission";
    e.submission.origin = text;
    e.submission.description = text;
    e.build.status = "ok";
    e.cases = {make_case("c1", Verdict::pass, ""), make_case("c2", Verdict::wrong_answer, text)};
    r.entries.push_back(e);
  }
  score_results(r);
  return r;
}

TEST(ReportInjection, WithoutEscapingTheOriginWouldAddAHeadingAndATable) {
  const std::string raw = "- **injector** (" + kHostile + ") passes 1 of 2 cases.\n";
  EXPECT_GT(structure_of(raw).headings, 0u);
  EXPECT_GT(structure_of(raw).table_rows, 0u);
  EXPECT_TRUE(structure_of(raw).html);
  const std::string escaped = "- **injector** (" + markdown_cell(kHostile) + ") passes 1 of 2 cases.\n";
  EXPECT_EQ(structure_of(escaped).headings, 0u);
  EXPECT_EQ(structure_of(escaped).table_rows, 0u);
  EXPECT_FALSE(structure_of(escaped).html);
}

TEST(ReportInjection, TheMarkdownReportKeepsItsStructure) {
  const Structure benign = structure_of(render_markdown(results_with("written by hand")));
  const std::string hostile_report = render_markdown(results_with(kHostile));
  const Structure hostile = structure_of(hostile_report);
  EXPECT_EQ(hostile.headings, benign.headings) << hostile_report;
  EXPECT_EQ(hostile.table_rows, benign.table_rows) << hostile_report;
  EXPECT_EQ(hostile.fences, benign.fences) << hostile_report;
  EXPECT_FALSE(hostile.html) << hostile_report;
  EXPECT_NE(hostile_report.find("## Reproduce"), std::string::npos);
}

TEST(ReportInjection, CellsEscapeWhatMarkdownWouldReadAsStructure) {
  EXPECT_EQ(markdown_cell("a|b"), "a\\|b");
  EXPECT_EQ(markdown_cell("line\n# heading"), "line # heading");
  EXPECT_EQ(markdown_cell("<!-- x -->"), "&lt;!-- x --&gt;");
  EXPECT_EQ(markdown_cell("probs_max_rel_error"), "probs_max_rel_error");  // inside a word: literal
  EXPECT_EQ(markdown_cell("_em_ *b* `c` [l]"), "\\_em\\_ \\*b\\* \\`c\\` \\[l\\]");
  EXPECT_EQ(markdown_cell("abc|def", 3), "abc...");
  EXPECT_EQ(markdown_code("a ``` b"), "````a ``` b````");
  EXPECT_EQ(markdown_code("`x"), "`` `x ``");
  EXPECT_EQ(markdown_code_block("```\nmore\n"), "````\n```\nmore\n````\n");
}

TEST(ReportInjection, TheJUnitFileStaysWellFormedXml) {
  testing::TempFolder tmp;
  const std::string path = tmp.path("r.xml");
  std::ofstream(path) << render_junit(results_with(kHostile));
  const auto parsed = testing::run_shell(
      "/usr/bin/python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); "
      "print(len(d.getElementsByTagName(\"testcase\")), len(d.getElementsByTagName(\"failure\")))' " +
      path);
  ASSERT_EQ(parsed.exit_code, 0) << parsed.output;
  EXPECT_EQ(parsed.output.substr(0, parsed.output.find('\n')), "4 2") << parsed.output;
}

}  // namespace
}  // namespace harness
