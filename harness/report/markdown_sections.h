// The sections of the Markdown report, each rendered from the results of
// one challenge on one device (internal to harness/report).
#pragma once

#include <string>
#include <vector>

#include "harness/report/report_input.h"

namespace harness::markdown {

struct Group {
  std::string challenge;
  const DeviceInfo* device = nullptr;       // may be null for results without device info
  std::vector<const EntryResult*> ranked;   // real submissions, side by side
  std::vector<const EntryResult*> mutants;  // mutants and negative controls
  std::vector<const ReviewerScore*> reviews;
  std::vector<const PeerTimings*> peers;  // measured on this group's kind of device
};

void summary(std::string& out, const Group& g);
void failures(std::string& out, const Group& g, Suite suite, const char* title);
void stability(std::string& out, const Group& g);
void performance(std::string& out, const Group& g);
void completeness(std::string& out, const Group& g);
// Line charts of per-step metrics of a workload ("series_charts" in the
// challenge's challenge.json, e.g. kv_cache's bytes in use through churn).
void series(std::string& out, const Group& g);
void mutants(std::string& out, const Group& g);
// What each submission said it holds beside what the harness saw it hold:
// the challenge's claim metric ("memory_claim_metric" in challenge.json's
// report settings) and the memory witnesses (witnessed_memory_bytes on the
// host, or a GPU worker's witnessed_host_memory_bytes;
// witnessed_device_memory_bytes on a GPU, or why there is no reading).
// This and timing_witness are in markdown_witnesses.cpp.
void memory(std::string& out, const Group& g);
// Each worker's claimed median beside what the timing witness saw: its
// floor, the median request's excess over the claim, a GPU worker's
// staging (harness/witness/timing_witness.h).
void timing_witness(std::string& out, const Group& g);
// How busy the machine was while the run timed its cases: a line of the
// environment section (markdown_machine_load.cpp), empty where no timing
// recorded the machine's load.
std::string machine_load_line(const RunResults& results);
// Each peer's median beside each submission's on the same perf cases
// ("3.2x" = that many times faster than the peer).
void peers(std::string& out, const Group& g);

}  // namespace harness::markdown
