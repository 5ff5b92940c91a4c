#include "harness/runner/selftest.h"

#include <fmt/format.h>

#include "harness/results/verdict_counts.h"
#include "harness/sandbox/sandbox.h"
#include "harness/witness/memory_witness.h"

namespace harness {

std::vector<SelftestFinding> evaluate_selftest(const RunResults& results) {
  std::vector<SelftestFinding> findings;
  for (const auto& e : results.entries) {
    SelftestFinding f;
    f.challenge = e.challenge;
    f.submission = e.submission.name;
    f.device = e.device;
    f.role = e.submission.role;
    if (e.submission.expect) {
      const Expectation& x = *e.submission.expect;
      size_t in_suite = 0, matching = 0;
      for (const auto& c : e.cases) {
        if (c.suite != x.suite) continue;
        ++in_suite;
        if (c.verdict == x.verdict) ++matching;
      }
      f.expected =
          fmt::format("{} in {}{}", verdict_name(x.verdict), suite_name(x.suite), x.every_case ? ", every case" : "");
      f.observed = verdict_counts(e, x.suite);
      f.ok = x.every_case ? in_suite > 0 && matching == in_suite : matching > 0;
      if (x.verdict == Verdict::sandbox_violation && !ptrace_kills_the_worker()) {
        // Under AddressSanitizer a ptrace is refused, not fatal: an exploit
        // whose attack was refused (it says so) and whose answers are right
        // has met its expectation in this build.
        size_t refused = 0;
        for (const auto& c : e.cases) {
          refused += c.suite == x.suite &&
                     (c.verdict == x.verdict ||
                      (c.verdict == Verdict::pass && c.worker_output.find(": stopped") != std::string::npos));
        }
        f.ok = x.every_case ? in_suite > 0 && refused == in_suite : refused > 0;
      }
      if (x.verdict == Verdict::memory_limit && applied_address_space_limit(e.device != "cpu") == 0) {
        // No address-space limit in this build or run (sandbox.h): nothing
        // can run out of it.
        f.ok = true;
        f.observed += " (not judged: no address-space limit applies in this build or run)";
      }
      if (x.verdict == Verdict::understated_memory && !memory_witness_meaningful()) {
        // This build cannot give that verdict (see memory_witness.h): say so
        // rather than blame the exploit or the defence.
        f.ok = true;
        f.observed += " (not judged: memory is not witnessed under AddressSanitizer)";
      }
    } else if (e.submission.role == "reference" || e.submission.role == "baseline" ||
               e.submission.role == "float32-control") {
      f.expected = "no failing case";
      f.observed = verdict_counts(e);
      f.ok = !e.cases.empty();
      for (const auto& c : e.cases) f.ok = f.ok && !is_failure(c.verdict) && c.verdict != Verdict::harness_error;
      // A control this machine cannot run (PyTorch's, without torch) proves nothing either way.
      if (!ran_any_case(e) && !e.cases.empty()) f.observed += " (not judged: " + e.cases.front().message + ")";
    } else {
      continue;
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace harness
