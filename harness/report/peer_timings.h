// Timings of a peer implementation on the same perf cases, measured outside
// the harness (scripts/gpu/pytorch_eager.py: PyTorch eager on the GPU) and
// set beside our submissions by `harness report --peer`. A peer is context,
// not a competitor: it is never scored or ranked.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

struct PeerTiming {
  std::string challenge;
  std::string case_id;
  std::string variant;  // e.g. "fp16" when a case has several (kv_cache K/V formats)
  std::string ops;      // what ran, e.g. "softmax + topk"
  // Case metrics an entry must have for this timing to apply to it (e.g.
  // {"format": 1}: only caches storing fp16); empty: every entry.
  nlohmann::json when = nlohmann::json::object();
  double median_ns = 0;
};

struct PeerTimings {
  std::string origin;       // the file
  std::string peer;         // "PyTorch eager"
  std::string device;       // what it ran on, as the measuring script saw it
  std::string device_kind;  // "cuda" or "cpu": only entries of that kind are compared
  std::vector<PeerTiming> timings;
};

// Reads a harness.peer/v1 file; throws UsageError naming the file and the problem.
PeerTimings load_peer_timings(const std::string& path);

// The timings of a peer judged in the run itself (role "peer"): the median
// of each perf case it passed, its answers checked and its timings
// witnessed like any submission's; `device_name` says what it ran on.
PeerTimings judged_peer_timings(const EntryResult& peer, const std::string& device_name,
                                const std::string& device_kind);

}  // namespace harness
