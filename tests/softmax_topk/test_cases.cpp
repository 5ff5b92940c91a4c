// The case matrix covers what the SPEC lists, and its ids are stable keys.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "harness/challenge_api/challenge.h"
#include "softmax_topk/host/drawn_shapes.h"
#include "softmax_topk/host/topk_case.h"

namespace softmax_topk {
namespace {

using harness::Suite;

std::vector<std::pair<harness::CaseSpec, TopkCase>> matrix() {
  std::vector<std::pair<harness::CaseSpec, TopkCase>> all;
  for (const auto& spec : harness::find_challenge("softmax_topk").cases()) {
    if (!spec.params.contains("drawn")) all.emplace_back(spec, topk_case_of(spec, 0));  // SoftmaxTopkDrawnShapes
  }
  return all;
}

TEST(SoftmaxTopkCases, IdsAreUniqueAndEveryCaseIsWellFormed) {
  std::set<std::string> ids;
  for (const auto& [spec, c] : matrix()) {
    EXPECT_TRUE(ids.insert(spec.id).second) << "duplicate id " << spec.id;
    EXPECT_GE(c.rows, 1) << spec.id;
    EXPECT_GE(c.k, 1) << spec.id;
    EXPECT_LE(c.k, c.vocab) << spec.id;
    const auto rows = static_cast<double>(c.rows);
    EXPECT_DOUBLE_EQ(spec.bytes.read, rows * static_cast<double>(c.vocab) * 4.0) << spec.id;
    EXPECT_DOUBLE_EQ(spec.bytes.written, rows * static_cast<double>(c.k) * 8.0) << spec.id;
    EXPECT_EQ(spec.id, make_case_spec(spec.suite, c, spec.quick).id) << "id not derived from params";
  }
}

TEST(SoftmaxTopkCases, TheMatrixCoversTheSpec) {
  std::set<int64_t> core_k;
  bool v1 = false, v_equals_k = false, v_not_mult_4 = false, v_not_mult_32 = false, rows1 = false, rows65536 = false,
       v262144 = false, beyond_256 = false;
  std::set<Data> stability_data, edge_data;
  std::map<Suite, int> quick_per_suite;
  for (const auto& [spec, c] : matrix()) {
    if (spec.suite == Suite::correctness) core_k.insert(c.k);
    v1 = v1 || c.vocab == 1;
    v_equals_k = v_equals_k || (c.vocab == c.k && c.k > 1);
    v_not_mult_4 = v_not_mult_4 || c.vocab % 4 != 0;
    v_not_mult_32 = v_not_mult_32 || (c.vocab % 32 != 0 && c.vocab % 4 == 0);
    rows1 = rows1 || c.rows == 1;
    rows65536 = rows65536 || c.rows == 65536;
    v262144 = v262144 || c.vocab == 262144;
    beyond_256 = beyond_256 || c.k > 256;
    if (spec.suite == Suite::stability) stability_data.insert(c.data);
    if (spec.suite == Suite::edge) edge_data.insert(c.data);
    if (spec.quick) ++quick_per_suite[spec.suite];
  }
  EXPECT_EQ(core_k, (std::set<int64_t>{1, 2, 5, 10, 32, 64, 128, 256}));
  EXPECT_TRUE(v1 && v_equals_k && v_not_mult_4 && v_not_mult_32 && rows1 && rows65536 && v262144 && beyond_256);
  EXPECT_TRUE(stability_data.count(Data::offset) && stability_data.count(Data::uniform) &&
              stability_data.count(Data::dominant));
  EXPECT_TRUE(edge_data.count(Data::ties) && edge_data.count(Data::equal) && edge_data.count(Data::masked));
  for (Suite s : harness::all_suites()) EXPECT_GT(quick_per_suite[s], 0) << harness::suite_name(s);
}

TEST(SoftmaxTopkCases, CoreCasesAreSafeFromCoincidentalPasses) {
  // Negative controls must fail every core case: no core case may be so
  // small that a trivial answer could be right by chance.
  for (const auto& [spec, c] : matrix()) {
    if (spec.suite != Suite::correctness) continue;
    EXPECT_GE(c.vocab, 100) << spec.id;
    EXPECT_EQ(c.data, Data::normal) << spec.id;
  }
}

TEST(SoftmaxTopkCases, PerfCasesExceedAnyLastLevelCache) {
  for (const auto& [spec, c] : matrix()) {
    if (spec.suite == Suite::perf) {
      EXPECT_GE(spec.bytes.total(), 64.0 * 1024 * 1024) << spec.id;
    }
  }
}

// The drawn cases hold their boundary at every seed, each a small problem.
TEST(SoftmaxTopkDrawnShapes, EverySeedDrawsItsBoundary) {
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    const TopkCase v = draw_shape(Drawn::vocab_edges, seed);
    bool one_off = false;
    for (int64_t block : {32, 128, 256, 1024, 4096})
      one_off = one_off || (v.vocab + 1) % block == 0 || (v.vocab - 1) % block == 0;
    EXPECT_TRUE(one_off) << seed << ": vocab " << v.vocab;
    const TopkCase r = draw_shape(Drawn::many_rows, seed);
    EXPECT_TRUE((r.rows > 4096 && r.rows < 8192) || (r.rows > 65536 && r.rows < 66560)) << seed << ": " << r.rows;
    EXPECT_NE(r.rows % 64, 0) << seed;
    const TopkCase k = draw_shape(Drawn::k_edges, seed);
    EXPECT_TRUE(k.vocab == k.k || k.vocab == k.k + 1 || k.vocab == k.k + 31 || k.vocab == 2 * k.k + 1) << seed;
    for (const TopkCase& c : {v, r, k}) {
      EXPECT_TRUE(c.k >= 1 && c.k <= c.vocab && c.k <= 256) << seed;
      EXPECT_LE(c.rows * c.vocab, 5'000'000) << seed;
    }
  }
  for (const auto& spec : harness::find_challenge("softmax_topk").cases()) {
    if (!spec.params.contains("drawn")) continue;
    EXPECT_EQ(spec.suite, Suite::edge);
    EXPECT_EQ(topk_case_of(spec, 7).vocab, draw_shape(drawn_from_name(spec.params["drawn"]), 7).vocab);
  }
}

}  // namespace
}  // namespace softmax_topk
