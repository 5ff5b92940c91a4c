// A peer's timings (PyTorch eager, measured by scripts/gpu/pytorch_eager.py)
// beside our submissions in the report: the ratio per case, only where the
// timing applies, only on the peer's kind of device; bad files refused.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/core/error.h"
#include "harness/report/markdown_report.h"
#include "harness/report/peer_timings.h"
#include "harness/scoring/scoring.h"
#include "support/test_support.h"

namespace harness {
namespace {

EntryResult decode_entry(const std::string& name, const std::string& device, int format, double median_ns) {
  EntryResult e;
  e.challenge = "kv_cache";
  e.device = device;
  e.submission.name = name;
  e.submission.challenge = "kv_cache";
  e.submission.device = device == "cpu" ? "cpu" : "cuda";
  e.submission.role = "submission";
  CaseResult c;
  c.id = "perf.decode.l1.h32x8.d128.b64.t2048";
  c.suite = Suite::perf;
  c.metrics = {{"format", format}};
  TimingResult t;
  t.samples_ns = {median_ns, median_ns, median_ns, median_ns, median_ns};
  t.summary = summarize(t.samples_ns);
  c.timing = t;
  e.cases.push_back(c);
  return e;
}

DeviceInfo device(const std::string& id, const std::string& kind) {
  DeviceInfo d;
  d.id = id;
  d.kind = kind;
  d.name = kind == "cuda" ? "Some GPU" : "Some CPU";
  return d;
}

PeerTimings eager() {
  PeerTimings p;
  p.origin = "peer.json";
  p.peer = "PyTorch eager";
  p.device = "Some GPU, torch 2.11";
  p.device_kind = "cuda";
  p.timings.push_back(
      {"kv_cache", "perf.decode.l1.h32x8.d128.b64.t2048", "fp32", "sdpa, fp32 K/V", {{"format", 0}}, 30e3});
  p.timings.push_back(
      {"kv_cache", "perf.decode.l1.h32x8.d128.b64.t2048", "fp16", "sdpa, fp16 K/V", {{"format", 1}}, 20e3});
  return p;
}

TEST(PeerReport, EachSubmissionIsComparedWithThePeerTimingThatAppliesToIt) {
  RunResults r;
  r.devices = {device("cpu", "cpu"), device("cuda:0", "cuda")};
  r.entries = {decode_entry("fp32-cache", "cuda:0", 0, 10e3), decode_entry("fp16-cache", "cuda:0", 1, 5e3),
               decode_entry("cpu-cache", "cpu", 0, 1e6)};
  r.run.complete = true;
  ReportInput input = combine_for_report({{"run.json", r}});
  input.peers.push_back(eager());
  const std::string md = render_markdown(input);
  // fp32 cache against fp32 eager: 30 / 10; fp16 cache against fp16 eager: 20 / 5.
  EXPECT_NE(md.find("| `perf.decode.l1.h32x8.d128.b64.t2048` (sdpa, fp32 K/V) | 30.0 us | 3.00x (10.0 us) | - |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `perf.decode.l1.h32x8.d128.b64.t2048` (sdpa, fp16 K/V) | 20.0 us | - | 4.00x (5.0 us) |"),
            std::string::npos)
      << md;
  // Measured on a GPU: never set beside the CPU entries.
  const size_t cpu_section = md.find("### kv_cache on cpu");
  ASSERT_NE(cpu_section, std::string::npos);
  const size_t next = md.find("### ", cpu_section + 1);
  EXPECT_EQ(md.substr(cpu_section, next - cpu_section).find("Beside PyTorch eager"), std::string::npos);
}

// A peer judged in the run (role "peer": PyTorch eager as a submission of
// its own) is the measure of "x times" in the report, from its own checked
// and witnessed medians; it sits in the tables beside the submissions but is
// never ranked (a case it fails is not the run's failure:
// Cli.APeersFailureIsShownButIsNotTheRunsFailure).
TEST(PeerReport, APeerJudgedInTheRunIsTheMeasureOfXTimesAndIsNeverRanked) {
  RunResults r;
  r.devices = {device("cuda:0", "cuda")};
  EntryResult eager = decode_entry("pytorch-eager", "cuda:0", 0, 30e3);
  eager.submission.role = "peer";
  r.entries = {decode_entry("cuda-fast", "cuda:0", 0, 10e3), eager};
  r.run.complete = true;
  score_results(r);
  EXPECT_TRUE(r.entries[0].scores->ranked);
  EXPECT_FALSE(r.entries[1].scores->ranked);
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("#### Beside pytorch-eager"), std::string::npos) << md;
  EXPECT_NE(md.find("| `perf.decode.l1.h32x8.d128.b64.t2048` | 30.0 us | 3.00x (10.0 us) |\n"), std::string::npos)
      << md;
  EXPECT_NE(md.find("**cuda-fast** is the only ranked submission"), std::string::npos) << md;
}

TEST(PeerReport, AFileThatIsNotPeerTimingsIsRefusedWithItsProblem) {
  testing::TempFolder folder;
  auto load_text = [&](const std::string& text) {
    const std::string path = folder.path("peer.json");
    std::ofstream(path) << text;
    try {
      load_peer_timings(path);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(load_text("{}").find("harness.peer/v1"), std::string::npos);
  EXPECT_NE(load_text("not json").find("not valid JSON"), std::string::npos);
  const std::string head = R"({"schema": "harness.peer/v1", "peer": "PyTorch eager", "device": "x", "cases": )";
  EXPECT_NE(load_text(head + R"([{"challenge": "kv_cache", "id": "a", "median_ns": -1}]})").find("positive time"),
            std::string::npos);
  EXPECT_NE(load_text(head + R"([{"challenge": "kv_cache", "median_ns": 1}]})").find("\"id\" must be a string"),
            std::string::npos);
  EXPECT_EQ(load_text(head + R"([{"challenge": "kv_cache", "id": "a", "median_ns": 1}]})"), "");
}

}  // namespace
}  // namespace harness
