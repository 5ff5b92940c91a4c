// The report sets what a submission claims to hold beside what the harness
// saw it hold: on the host, and on a GPU the driver's figure or why there is
// none.
#include <gtest/gtest.h>

#include "harness/report/markdown_report.h"
#include "harness/scoring/scoring.h"
#include "support/test_support.h"

namespace harness {
namespace {

EntryResult kv_entry(const std::string& name, const std::string& device, const nlohmann::json& metrics) {
  CaseResult c;
  c.id = "edge.churn.l2.h4x4.d64";
  c.suite = Suite::edge;
  c.metrics = metrics;
  return testing::entry_with_case("kv_cache", name, device, c);
}

// Every memory section of the report (one per challenge and device).
std::string memory_sections(const RunResults& r) {
  return testing::markdown_sections(render_markdown(r), "#### Memory: claimed and witnessed");
}

TEST(MemoryReport, TheClaimStandsBesideWhatTheHarnessSaw) {
  RunResults r;
  r.run.complete = true;
  r.entries.push_back(kv_entry("honest", "cpu", {{"most_bytes_in_use", 2 << 20}, {"witnessed_memory_bytes", 3 << 20}}));
  r.entries.push_back(kv_entry("on-gpu", "cuda:0",
                               {{"most_bytes_in_use", 1 << 20}, {"device_memory_witness", "none: NVML not loadable"}}));
  score_results(r);
  const std::string section = memory_sections(r);
  EXPECT_NE(section.find("| honest | 2.0 MiB (`edge.churn.l2.h4x4.d64`) | 3.0 MiB (`edge.churn.l2.h4x4.d64`) | - |"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("| on-gpu | 1.0 MiB (`edge.churn.l2.h4x4.d64`) | - | none: NVML not loadable |"),
            std::string::npos)
      << section;
}

// A GPU worker's host memory stands in the host column beside the device's,
// and the report says it is judged with the runtime's allowance.
TEST(MemoryReport, AGpuWorkersHostMemoryStandsBesideItsDeviceMemory) {
  RunResults r;
  r.run.complete = true;
  r.entries.push_back(kv_entry("on-gpu", "cuda:0",
                               {{"most_bytes_in_use", 1 << 20},
                                {"witnessed_host_memory_bytes", 3 << 20},
                                {"witnessed_device_memory_bytes", 2 << 20}}));
  score_results(r);
  const std::string section = memory_sections(r);
  EXPECT_NE(section.find("| on-gpu | 1.0 MiB (`edge.churn.l2.h4x4.d64`) | 3.0 MiB (`edge.churn.l2.h4x4.d64`) | "
                         "2.0 MiB (`edge.churn.l2.h4x4.d64`) |"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("judged the same way with an allowance of 64 MiB for its runtime's share"), std::string::npos)
      << section;
}

TEST(MemoryReport, AChallengeWithoutAMemoryClaimHasNoSection) {
  RunResults r;
  r.run.complete = true;
  EntryResult e = kv_entry("topk", "cpu", {{"witnessed_memory_bytes", 1}});
  e.challenge = "softmax_topk";
  r.entries.push_back(e);
  score_results(r);
  EXPECT_EQ(memory_sections(r), "");
}

}  // namespace
}  // namespace harness
