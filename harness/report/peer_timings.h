// Timings of a peer implementation on the same perf cases, measured outside
// the harness (scripts/gpu/pytorch_eager.py: PyTorch eager on the GPU) and
// set beside our submissions by `harness report --peer`. A peer is context,
// not a competitor: it is never scored or ranked.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

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

}  // namespace harness
