// The churn workload's script, drawn from the case's seed before any cache
// exists, so that what it exercises can be checked at every seed without
// one (tests/kv_cache/test_seed_coverage.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/rng.h"

namespace kv {

struct ChurnStep {
  enum Kind { start, release, decode } kind;
  int64_t sequence = 0;  // start, release
  int64_t tokens = 0;    // start: the prefill's length
};

// 40 rounds of sequences starting (1 to 200 tokens), ending, and decode
// rounds over every live sequence (those below max_tokens). Every other
// round starts a sequence whatever the draw, releasing one first when
// max_sequences are live, so that at every seed more sequences start than
// there are slots: a cache must reuse what released sequences held.
std::vector<ChurnStep> plan_churn(harness::Rng& rng, int32_t max_sequences);

// Sequence ids are arbitrary int64 values, never small or contiguous, and
// increase with i.
int64_t sequence_id(int64_t i);

}  // namespace kv
