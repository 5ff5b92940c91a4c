// The attention case matrix covers what the README promises.
#include <gtest/gtest.h>

#include <set>

#include "attention/host/attn_case.h"
#include "attention/sdpa_reference.h"

namespace attention {
namespace {

std::vector<AttnCase> listed(harness::Suite suite) {
  std::vector<AttnCase> shapes;
  for (const auto& spec : case_matrix()) {
    if (spec.suite == suite) shapes.push_back(attn_case_of(spec, "cpu"));
  }
  return shapes;
}

TEST(AttentionCases, IdsAreUniqueAndEveryShapeIsAForwardAndABackward) {
  std::set<std::string> ids;
  size_t forward = 0, backward = 0;
  for (const auto& spec : case_matrix()) {
    EXPECT_TRUE(ids.insert(spec.id).second) << spec.id;
    (attn_case_of(spec, "cpu").op == Op::forward ? forward : backward) += 1;
  }
  EXPECT_EQ(forward, backward);
}

TEST(AttentionCases, TheMatrixCoversTheReadme) {
  std::set<int64_t> dims, groups;
  bool causal = false, full = false, fewer_queries = false, more_queries = false, one_key = false, one_query = false,
       long_against_one = false, one_row_tail = false;
  for (harness::Suite suite : {harness::Suite::correctness, harness::Suite::edge, harness::Suite::stability}) {
    for (const AttnCase& c : listed(suite)) {
      dims.insert(c.dim);
      groups.insert(c.group());
      (c.causal ? causal : full) = true;
      fewer_queries |= c.causal && c.n_q < c.n_kv;
      more_queries |= c.causal && c.n_q > c.n_kv;
      one_key |= c.n_kv == 1;
      one_query |= c.n_q == 1;
      long_against_one |= (c.n_q == 1 && c.n_kv == 16384) || (c.n_q == 16384 && c.n_kv == 1);
      // 2^k + 1: a one-row last tile for every power-of-two tile up to 2^k.
      one_row_tail |= c.n_kv > 64 && ((c.n_kv - 1) & (c.n_kv - 2)) == 0;
    }
  }
  EXPECT_EQ(dims, (std::set<int64_t>{32, 64, 96, 128}));
  EXPECT_EQ(groups, (std::set<int64_t>{1, 2, 4, 8}));
  EXPECT_TRUE(causal && full && fewer_queries && more_queries && one_key && one_query && long_against_one &&
              one_row_tail);
}

TEST(AttentionCases, PerfShapesDependOnTheDevice) {
  for (const auto& spec : case_matrix()) {
    if (spec.suite != harness::Suite::perf) continue;
    const AttnCase cpu = attn_case_of(spec, "cpu"), cuda = attn_case_of(spec, "cuda");
    EXPECT_GT(cuda.flops(), 100 * cpu.flops()) << spec.id;
    EXPECT_EQ(cuda.op, cpu.op);
  }
}

TEST(AttentionCases, FlopsCountOnlyTheVisiblePairs) {
  AttnCase c{1, 1, 1, 4, 4, 2, true};
  EXPECT_DOUBLE_EQ(c.flops(), 4.0 * 2 * (1 + 2 + 3 + 4));
  c.causal = false;
  EXPECT_DOUBLE_EQ(c.flops(), 4.0 * 2 * 16);
  c.op = Op::backward;
  EXPECT_DOUBLE_EQ(c.flops(), 2.5 * 4.0 * 2 * 16);
}

}  // namespace
}  // namespace attention
