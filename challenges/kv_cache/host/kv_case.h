// The parameters of one kv_cache workload and the case matrix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/challenge_api/case_spec.h"

namespace kv {

// The scripted workloads of README.md ("Workloads").
enum class Workload {
  single,                // one sequence: a prefill chunk, then decode steps
  batch,                 // sequences of different lengths appended independently, attended together
  chunked_prefill,       // a prefill in chunks, each attended causally, then decode
  layers,                // several layers, layer by layer
  gqa,                   // grouped-query attention
  churn,                 // sequences end and start; memory reused, nothing leaked
  over_budget,           // appends past the budget are refused cleanly, the rest stays intact
  layered_budget,        // a multi-layer cache at its budget: a chunk is refused whole, at its first layer
  capacity,              // how many live tokens fit in a budget
  capacity_after_churn,  // as many tokens fit after sequences came and went as when the cache was created
  block_edges,           // lengths around powers of two
  ragged_reuse,          // lengths block - 1, block, block + 1 for a block drawn from the seed; released blocks reused
  one_token,             // a single one-token sequence
  large_scores,          // q and k scaled so that scores reach about +-100
  long_context,          // one sequence of 32768 tokens
  decode,                // perf: a decode step of a whole batch, timed
};

struct KvCase {
  Workload workload = Workload::single;
  int32_t layers = 1;
  int32_t q_heads = 4;
  int32_t kv_heads = 4;
  int32_t head_dim = 64;
  int32_t batch = 0;   // decode: sequences
  int64_t tokens = 0;  // decode: tokens per sequence
};

std::string workload_name(Workload w);
KvCase kv_case_of(const harness::CaseSpec& spec);
harness::CaseSpec make_case_spec(harness::Suite suite, const KvCase& c, bool quick);
std::vector<harness::CaseSpec> case_matrix();

// K and V of one token in one layer, in a format of `bytes_per_element`.
inline double token_bytes(const KvCase& c, double bytes_per_element) {
  return 2.0 * c.kv_heads * c.head_dim * bytes_per_element;
}
// Decode of `rows` queries over `attended_tokens` tokens in all: reads the
// K and V of every attended token and q, writes out.
harness::ByteModel decode_bytes(const KvCase& c, double attended_tokens, double rows, double bytes_per_element);

}  // namespace kv
