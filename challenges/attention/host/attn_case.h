// The parameters of one attention case and the case matrix.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/challenge_api/case_spec.h"

namespace attention {

// How q, k, v and dout are drawn (README.md, "Cases").
enum class Data {
  normal,     // every element N(0, 1)
  huge,       // v x 1e30, dout x 1e-30: o of 1e30, dv of 1e-30 (dout . v stays ~1)
  tiny,       // v x 1e-30, dout x 1e30: the mirror image
  flat,       // q N(0, 1) * 1e-20: every score ~0, p uniform
  max_jumps,  // key blocks of 16 shift every score by up to +-4000, rising and falling
  one_hot,    // q, k scaled so each row's largest score leads the next by ~20
};

enum class Op { forward, backward };

struct AttnCase {
  int64_t batch = 1;
  int64_t heads_q = 1;
  int64_t heads_kv = 1;
  int64_t n_q = 1;
  int64_t n_kv = 1;
  int64_t dim = 64;
  bool causal = false;
  Data data = Data::normal;
  Op op = Op::forward;
  float given_scale = 0;  // 0: 1 / sqrt(dim), as in every case

  float scale() const;
  int64_t group() const { return heads_q / heads_kv; }
  int64_t q_rows() const { return batch * heads_q * n_q; }
  int64_t kv_rows() const { return batch * heads_kv * n_kv; }
  // Heads numbered over the batch (b * heads + h): the kv head a query head
  // reads, and the first query head of a kv head's group.
  int64_t kv_head(int64_t q_head) const { return q_head / heads_q * heads_kv + q_head % heads_q / group(); }
  int64_t first_q_head(int64_t kv) const { return kv / heads_kv * heads_q + kv % heads_kv * group(); }
  // Scores the op computes: 2 * dim multiply-adds per visible pair, x 2.5
  // for a backward (s again, dp, dq, dk, dv).
  double flops() const;
};

std::string data_name(Data data);
std::string op_name(Op op);
// The case's parameters; a perf case's shape depends on the device
// ("cpu" or "cuda").
AttnCase attn_case_of(const harness::CaseSpec& spec, const std::string& device_kind);
std::vector<harness::CaseSpec> case_matrix();

// The fewest bytes a call moves: its inputs read once, its outputs written once.
harness::ByteModel bytes_of(const AttnCase& c);

}  // namespace attention
