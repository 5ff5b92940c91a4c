#include "harness/report/junit_report.h"

#include <fmt/format.h>

namespace harness {

namespace {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_junit(const RunResults& r) {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double total_time = 0;
  std::string suites;
  for (const auto& e : r.entries) {
    size_t suite_failures = 0, suite_errors = 0, suite_skipped = 0;
    double suite_time = 0;
    std::string cases;
    for (const auto& c : e.cases) {
      suite_time += c.seconds;
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n",
                           xml_escape(fmt::format("{}.{}.{}", e.challenge, e.submission.name, e.device)),
                           xml_escape(c.id), c.seconds);
      std::string also;
      for (const Finding& other : c.other_failures)
        also += fmt::format("\nalso {}: {}", verdict_name(other.verdict), other.message);
      const std::string detail = xml_escape(fmt::format("{}{}\nreproduce: {}", c.message, also, c.reproduce));
      if (c.verdict == Verdict::unsupported || c.verdict == Verdict::unavailable) {
        ++suite_skipped;
        cases += fmt::format("      <skipped message=\"{}\"/>\n",
                             xml_escape(std::string(verdict_name(c.verdict)) + ": " + c.message));
      } else if (c.verdict == Verdict::harness_error) {
        ++suite_errors;
        cases += fmt::format("      <error type=\"harness_error\" message=\"{}\">{}</error>\n", xml_escape(c.message),
                             detail);
      } else if (is_failure(c.verdict)) {
        ++suite_failures;
        cases += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", verdict_name(c.verdict),
                             xml_escape(fmt::format("{}: {}", verdict_name(c.verdict), c.message)), detail);
      }
      cases += "    </testcase>\n";
    }
    tests += e.cases.size();
    failures += suite_failures;
    errors += suite_errors;
    skipped += suite_skipped;
    total_time += suite_time;
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\" "
        "timestamp=\"{}\">\n{}  </testsuite>\n",
        xml_escape(fmt::format("{}/{} ({})", e.challenge, e.submission.name, e.device)), e.cases.size(), suite_failures,
        suite_errors, suite_skipped, suite_time, xml_escape(r.run.started), cases);
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"harness\" tests=\"{}\" failures=\"{}\" "
      "errors=\"{}\" "
      "skipped=\"{}\" time=\"{:.3f}\">\n{}</testsuites>\n",
      tests, failures, errors, skipped, total_time, suites);
}

}  // namespace harness
