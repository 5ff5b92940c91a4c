// The layernorm case matrix covers the SPEC.
#include <gtest/gtest.h>

#include <set>

#include "harness/challenge_api/challenge.h"
#include "layernorm_backward/host/drawn_shapes.h"
#include "layernorm_backward/host/ln_case.h"

namespace layernorm {
namespace {

TEST(LayerNormCases, IdsAreUniqueAndTheMatrixCoversTheSpec) {
  std::set<std::string> ids;
  std::set<int64_t> dims;
  std::set<Data> data;
  bool rows1 = false, rows65536 = false, perf_target_fwd = false, perf_target_bwd = false;
  std::set<double> offsets;
  for (const auto& spec : harness::find_challenge("layernorm_backward").cases()) {
    EXPECT_TRUE(ids.insert(spec.id).second) << spec.id;
    if (spec.params.contains("drawn")) continue;  // LayerNormDrawnShapes
    const LnCase c = ln_case_of(spec, 0);
    EXPECT_EQ(make_case_spec(spec.suite, c, spec.quick).id, spec.id);
    dims.insert(c.dim);
    data.insert(c.data);
    rows1 = rows1 || c.rows == 1;
    rows65536 = rows65536 || c.rows == 65536;
    if (c.data == Data::offset) offsets.insert(c.amount);
    if (spec.suite == harness::Suite::perf) {
      EXPECT_GT(spec.bytes.total(), 64.0 * 1024 * 1024) << spec.id;
      perf_target_fwd = perf_target_fwd || (c.rows == 2048 && c.dim == 16384 && c.ops == Ops::forward);
      perf_target_bwd = perf_target_bwd || (c.rows == 2048 && c.dim == 16384 && c.ops == Ops::backward);
    } else {
      EXPECT_EQ(c.ops, Ops::both) << spec.id;
      EXPECT_DOUBLE_EQ(spec.bytes.total(), 0) << spec.id;
    }
    if (spec.suite == harness::Suite::correctness) {
      EXPECT_EQ(c.data, Data::normal) << spec.id;
    }
  }
  for (int64_t d : {1, 2, 7, 64, 768, 1024, 4096, 8192, 65536}) EXPECT_TRUE(dims.count(d)) << d;
  EXPECT_EQ(data.size(), 7u);
  EXPECT_TRUE(rows1 && rows65536 && perf_target_fwd && perf_target_bwd);
  EXPECT_EQ(offsets, (std::set<double>{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6}));
}

TEST(LayerNormCases, VectorAndRowBlockTailsAreExercised) {
  // A width above any vector width that is no multiple of 8 (a vector loop's
  // tail) nor of 64 (a warp's); a large row count no multiple of 128 (a
  // reduction's last partial chunk of rows). Shapes do not depend on the seed.
  bool column_tail = false, row_tail = false;
  for (const auto& spec : harness::find_challenge("layernorm_backward").cases()) {
    if (spec.suite == harness::Suite::perf || spec.params.contains("drawn")) continue;
    const LnCase c = ln_case_of(spec, 0);
    column_tail = column_tail || (c.dim > 64 && c.dim % 8 != 0 && c.dim % 64 != 0);
    row_tail = row_tail || (c.rows >= 1024 && c.rows % 128 != 0 && c.rows % 64 != 0);
  }
  EXPECT_TRUE(column_tail);
  EXPECT_TRUE(row_tail);
}

// The drawn cases hold their boundary at every seed: rows above 4096 and
// 65536 off every row block of 64 and 128, and an odd width (off every
// vector width), a small enough problem each.
TEST(LayerNormDrawnShapes, EverySeedDrawsItsBoundary) {
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    const LnCase large = draw_shape(Drawn::large_rows, seed);
    EXPECT_TRUE(large.rows > 4096 && large.rows < 8192 && large.rows % 64 != 0) << seed << ": " << large.rows;
    const LnCase huge = draw_shape(Drawn::huge_rows, seed);
    EXPECT_TRUE(huge.rows > 65536 && huge.rows % 64 != 0 && huge.dim <= 17) << seed << ": " << huge.rows;
    const LnCase odd = draw_shape(Drawn::odd_width, seed);
    EXPECT_TRUE(odd.dim % 2 == 1 && odd.dim > 56 && odd.rows >= 1 && odd.rows <= 200) << seed << ": " << odd.dim;
    for (const LnCase& c : {large, huge, odd}) EXPECT_LE(c.rows * c.dim, 3'000'000) << seed;
  }
  // Replayable: one seed, one shape.
  EXPECT_EQ(draw_shape(Drawn::large_rows, 42).rows, draw_shape(Drawn::large_rows, 42).rows);
  for (const auto& spec : harness::find_challenge("layernorm_backward").cases()) {
    if (!spec.params.contains("drawn")) continue;
    EXPECT_EQ(spec.suite, harness::Suite::edge);
    EXPECT_EQ(ln_case_of(spec, 7).rows, draw_shape(drawn_from_name(spec.params["drawn"]), 7).rows);
  }
}

TEST(LayerNormCases, ByteModelsCountTheMinimumTraffic) {
  const LnCase c{4096, 16384, Data::normal, 0, 1e-5f, Ops::backward};
  // Forward reads x, gamma, beta and writes y, mean, rstd.
  EXPECT_DOUBLE_EQ(forward_bytes(c).read, 4.0 * 4096 * 16384 + 8.0 * 16384);
  EXPECT_DOUBLE_EQ(forward_bytes(c).written, 4.0 * 4096 * 16384 + 8.0 * 4096);
  // Backward reads dy, x, gamma, mean, rstd and writes dx, dgamma, dbeta.
  EXPECT_DOUBLE_EQ(backward_bytes(c).read, 8.0 * 4096 * 16384 + 4.0 * 16384 + 8.0 * 4096);
  EXPECT_DOUBLE_EQ(backward_bytes(c).written, 4.0 * 4096 * 16384 + 8.0 * 16384);
  EXPECT_EQ(minimum_saved_bytes(4096), 8 * 4096);
}

}  // namespace
}  // namespace layernorm
