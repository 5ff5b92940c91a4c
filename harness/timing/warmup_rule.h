// How long a timing warms up: every input set once, then more calls until
// the policy's warmup_ms has passed, never more than kMaxWarmupCallsPerSet
// calls per set. One rule for the timing loop, which checks it after every
// call, and for the worker's batches, which ask how many calls to make.
#pragma once

#include <cstddef>

#include "harness/ipc/protocol.h"

namespace harness {

inline constexpr size_t kMaxWarmupCallsPerSet = 100;

class WarmupRule {
 public:
  WarmupRule(const protocol::TimingPolicy& policy, size_t set_count)
      : warmup_ns_(policy.warmup_ms * 1e6), sets_(set_count) {}

  // Whether warm-up goes on after `calls` calls that took `elapsed_ns`.
  bool wants_more(size_t calls, double elapsed_ns) const {
    return calls < sets_ || (elapsed_ns < warmup_ns_ && calls < most_calls());
  }
  // How many more calls, at the mean time per call so far, until it stops.
  size_t more_calls(size_t calls, double elapsed_ns) const;

 private:
  size_t most_calls() const { return kMaxWarmupCallsPerSet * sets_; }
  double warmup_ns_;
  size_t sets_;
};

}  // namespace harness
