// The memory dimension of attention: each call's peak working memory (the
// peak memory witness) against what tiles need (README.md, "Memory").
#pragma once

#include <cstdint>

#include "attn_case.h"
#include "harness/challenge_api/case_context.h"
#include "harness/results/results.h"

namespace attention {

// What a tiled implementation needs beyond its inputs and outputs on a
// machine of `threads` threads: per thread a tile of 128 queries against
// every key (O(tile x N)), and for a backward rowsum(dout * o) of every
// query, plus 1 MiB for a thread pool's stacks and the allocator.
int64_t tile_memory_allowance(const AttnCase& c, int threads);

// Records the case's allowance beside the witness's reading.
void record_memory_allowance(const AttnCase& c, harness::CaseContext& ctx);

// Per case that was watched: 100 when its peak (less 0.5 MiB) is within
// the allowance, else 100 * allowance / peak (0 for a case that did not
// pass), averaged.
harness::DimensionScore memory_score(const harness::EntryResult& entry);

}  // namespace attention
