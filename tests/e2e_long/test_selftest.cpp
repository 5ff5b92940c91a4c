// The mutant catalogue is the test of the checker: `harness selftest` must
// give every mutant and control its declared verdict, and the tolerance must
// be justified by a reference that passes it and a mutant that fails it.
// One test, because each test runs as its own process under ctest and the
// selftest is the expensive part.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results_json.h"
#include "harness/runner/selftest.h"
#include "harness/runner/tolerance_justification.h"
#include "support/test_support.h"

namespace harness {
namespace {

// On the CPU: the catalogue's CUDA mutants need a GPU and are not in the run.
void expect_declared_verdicts(const testing::CommandResult& command, const RunResults& results, size_t min_mutants) {
  EXPECT_EQ(command.exit_code, 0) << command.output;
  size_t mutants = 0, controls = 0;
  for (const auto& f : evaluate_selftest(results)) {
    EXPECT_TRUE(f.ok) << f.submission << ": must get " << f.expected << ", got " << f.observed;
    mutants += f.role == "mutant";
    controls += f.role == "control";
  }
  EXPECT_GE(mutants, min_mutants) << "mutants missing from the catalogue";
  EXPECT_EQ(controls, 4u);
}

void expect_build_failure_reported(const RunResults& results) {
  const EntryResult& e = testing::entry_of(results, "cpu-mutant-does-not-compile");
  EXPECT_EQ(e.build.status, "failed");
  EXPECT_NE(e.build.log_excerpt.find("error"), std::string::npos) << e.build.log_excerpt;
  for (const auto& c : e.cases) EXPECT_EQ(c.verdict, Verdict::build_failed);
}

// The SPEC: every tolerance is justified by the project's reference passing
// it and a realistic mutant failing it.
void expect_tolerance_justified(const RunResults& results) {
  const double rtol = 3e-4;  // challenges/softmax_topk/challenge.json
  for (const char* ours : {"cpu-fast", "cpu-naive"}) {
    double worst = 0;
    for (const auto& c : testing::entry_of(results, ours).cases) {
      EXPECT_EQ(c.verdict, Verdict::pass) << ours << " " << c.id << ": " << c.message;
      worst = std::max(worst, c.metrics.value("probs_max_rel_error", 0.0));
    }
    EXPECT_LT(worst, rtol) << ours;
    ::testing::Test::RecordProperty(std::string(ours) + "_worst_rel_error", std::to_string(worst));
  }
  // bf16 rounding of exp(x - max) leaves the row's largest term (exactly 1)
  // intact, so with k = 1 only the sum's averaged error remains and can fall
  // under the tolerance; from k = 2 on the rounding of the other winners shows. The
  // verdict must follow the measured error exactly, and most core cases fail.
  size_t caught = 0, core = 0;
  for (const auto& c : testing::entry_of(results, "cpu-mutant-bf16-exp").cases) {
    if (c.suite != Suite::correctness) continue;
    ++core;
    const double error = c.metrics.value("probs_max_rel_error", 0.0);
    EXPECT_EQ(c.verdict == Verdict::wrong_answer, error > rtol) << c.id << " error " << error;
    caught += c.verdict == Verdict::wrong_answer;
  }
  EXPECT_GE(4 * caught, 3 * core) << caught << " of " << core << " core cases caught";
}

// Every tolerance of the challenge shown by the run: our references and the
// sound control within it on every case, its mutants beyond it on the
// core cases challenge.json names (tolerance_justification.h), and said so
// in the selftest's output.
void expect_every_tolerance_justified(const testing::CommandResult& command, const RunResults& results,
                                      size_t tolerances) {
  const auto justifications = justify_tolerances(results);
  EXPECT_EQ(justifications.size(), tolerances);
  for (const auto& j : justifications) {
    EXPECT_TRUE(j.shown()) << j.challenge << " " << j.tolerance << (j.declared ? "" : ": undeclared");
    for (const auto& f : j.facts)
      EXPECT_TRUE(f.ok) << j.tolerance << ": " << f.kind << " " << f.submission << " " << f.observed;
    for (const auto& kind : j.missing) ADD_FAILURE() << j.tolerance << ": no " << kind << " in the run";
  }
  size_t printed = 0;
  for (size_t at = command.output.find("  justified: "); at != std::string::npos;
       at = command.output.find("  justified: ", at + 1)) {
    ++printed;
  }
  EXPECT_EQ(printed, tolerances) << command.output;
}

// The number written right after the first `marker` in `text`. (No
// std::regex: GCC 12 warns inside its own regex code in the sanitizer build.)
std::optional<double> number_after(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const char* start = text.c_str() + at + marker.size();
  char* end = nullptr;
  const double value = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return value;
}

// The exploits of softmax_topk (submissions/softmax_topk/exploits): their
// verdicts are checked with every other expectation; here, what each
// defence must also bound: the time a fault costs.
void expect_exploits_stopped(const RunResults& results) {
  size_t exploits = 0;
  for (const auto& e : results.entries) exploits += e.submission.role == "exploit";
  EXPECT_GE(exploits, 26u) << "exploits missing from the corpus";
  // The field attacks that the sandbox refuses without killing answer
  // correctly (their verdict is pass), so their verdict alone would not show
  // a hole: each says on stderr whether its attack got through.
  size_t refused = 0;
  for (const auto& e : results.entries) {
    if (e.submission.role != "exploit") continue;
    for (const auto& c : e.cases) {
      EXPECT_EQ(c.worker_output.find("GOT THROUGH"), std::string::npos) << e.submission.name << ": " << c.worker_output;
      refused += c.worker_output.find(": stopped") != std::string::npos;
    }
  }
  EXPECT_GE(refused, 6u);
  // Watched by its pid, a worker whose child holds the socket is a crash at
  // once, not a timeout after --timeout 3.
  for (const char* name : {"cpu-exploit-child-holds-socket", "process-exploit-child-holds-stdout"}) {
    for (const auto& c : testing::entry_of(results, name).cases) EXPECT_LT(c.seconds, 2.0) << name << ": " << c.message;
  }
  // A constructor that never returns costs the first case its --timeout,
  // and the next case nothing: the load failure is remembered.
  const auto& hanging = testing::entry_of(results, "cpu-exploit-hanging-constructor").cases;
  ASSERT_EQ(hanging.size(), 2u);
  EXPECT_LT(hanging[0].seconds, 4.5);
  EXPECT_LT(hanging[1].seconds, 0.5);
  // 4 MiB printed per call: each case keeps a bounded tail and says so.
  for (const auto& c : testing::entry_of(results, "cpu-exploit-output-flood").cases) {
    EXPECT_LT(c.worker_output.size(), 2100u);
    EXPECT_NE(c.worker_output.find("earlier bytes not kept"), std::string::npos) << c.worker_output.substr(0, 100);
  }
  // The patched clock really ran slow in the worker (its claim alone would
  // have scored ten times the speed): the harness's clock says by how much.
  for (const auto& c : testing::entry_of(results, "cpu-exploit-clock-patch").cases) {
    const auto claimed_ms = number_after(c.message, "took "), witnessed_ms = number_after(c.message, " requests take ");
    ASSERT_TRUE(claimed_ms && witnessed_ms) << c.message;
    EXPECT_GT(*witnessed_ms, 5 * *claimed_ms) << c.message;
    EXPECT_NE(c.worker_output.find("runs 10x slow"), std::string::npos) << c.worker_output;
  }
  // The 768 MB sparse output is refused by its size, not read.
  for (const auto& c : testing::entry_of(results, "process-exploit-huge-sparse-output").cases) {
    EXPECT_NE(c.message.find("more than the"), std::string::npos) << c.message;
  }
}

// harness list prints the injected origin on the exploit's own line.
void expect_list_table_intact() {
  const auto list = testing::run_cli("list softmax_topk");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  size_t lines_naming_it = 0;
  for (size_t start = 0; start < list.output.size();) {
    const size_t end = std::min(list.output.find('\n', start), list.output.size());
    const std::string line = list.output.substr(start, end - start);
    lines_naming_it += line.find("cpu-exploit-report-injection") != std::string::npos;
    EXPECT_NE(line.rfind("# Injected", 0), 0u) << line;
    EXPECT_NE(line.rfind("|---|", 0), 0u) << line;
    start = end + 1;
  }
  EXPECT_EQ(lines_naming_it, 1u) << list.output;
}

// `harness selftest <challenge>` on the CPU: every declared verdict, then the
// justification of each tolerance.
void expect_selftest_passes(const std::string& challenge, const std::string& options, size_t min_mutants,
                            size_t tolerances) {
  testing::TempFolder folder;
  const std::string out = folder.path("selftest.json");
  const auto command = testing::run_cli("selftest " + challenge + " --device cpu " + options + " -o " + out);
  const RunResults results = load_results(out);
  expect_declared_verdicts(command, results, min_mutants);
  expect_every_tolerance_justified(command, results, tolerances);
}

// The tests in the order ctest starts them on a fresh build (all of equal
// COST): the longest first, kv_cache's, so that the rest of the suite runs
// beside it rather than after it.
TEST(Selftest, KvCacheMutantsGetTheirVerdictsAndEachToleranceIsJustified) {
  // challenges/kv_cache/challenge.json: fp32 1e-4, fp16 1e-2, int8 5e-2, each
  // with our cache of that format, the NumPy control storing it and a mutant
  // beyond it on every core case (the GQA mapping only where query heads
  // outnumber kv heads with several groups).
  expect_selftest_passes("kv_cache", "--timeout 10 --seed 13", 9, 3);
}

TEST(Selftest, EveryMutantGetsItsVerdictAndTheToleranceIsJustified) {
  testing::TempFolder folder;
  const std::string out = folder.path("selftest.json");
  // --timeout 3: the hang mutant costs two timeouts, the hanging-constructor
  // exploit one; nothing else comes near.
  const auto command = testing::run_cli("selftest softmax_topk --device cpu --timeout 3 --seed 11 -o " + out);
  const RunResults results = load_results(out);
  expect_declared_verdicts(command, results, 15);
  expect_build_failure_reported(results);
  expect_tolerance_justified(results);
  expect_every_tolerance_justified(command, results, 2);  // probs, probs_small_terms
  expect_exploits_stopped(results);
  expect_list_table_intact();
}

TEST(Selftest, LayerNormMutantsGetTheirVerdictsAndEachToleranceIsJustified) {
  // challenges/layernorm_backward/challenge.json: y 1e-5; dx, dgamma, dbeta
  // 1e-4, each with the mutants that justify it (the sample variance is
  // beyond 1e-5 in y up to D = 8192, not at D = 65536: 7 of 8 core cases).
  expect_selftest_passes("layernorm_backward", "--timeout 5 --seed 12", 8, 4);
}

}  // namespace
}  // namespace harness
