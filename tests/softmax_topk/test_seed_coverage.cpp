// What the softmax_topk data kinds are meant to exercise holds at every
// seed, and the error of a data-dependent bug they target does not depend
// on the draw.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "softmax_topk/host/data.h"
#include "softmax_topk/host/topk_case.h"

namespace softmax_topk {
namespace {

constexpr int kSeeds = 200;
constexpr double kRtol = 3e-4;  // challenge.json's probs rtol

std::vector<TopkCase> cases_of(Data data) {
  std::vector<TopkCase> found;
  for (const auto& spec : harness::find_challenge("softmax_topk").cases()) {
    if (spec.params.contains("drawn")) continue;
    const TopkCase c = topk_case_of(spec, 0);
    if (c.data == data) found.push_back(c);
  }
  return found;
}

TEST(SoftmaxTopkSeedCoverage, TheLateDominantLogitLiesPastTheFirstTileAndOverflowsItsMaxAtEverySeed) {
  const auto cases = cases_of(Data::dominant_late);
  ASSERT_FALSE(cases.empty());
  for (const TopkCase& c : cases) {
    ASSERT_GT(c.vocab, kTile);
    std::vector<float> logits(static_cast<size_t>(c.rows * c.vocab));
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
      generate_logits(c, seed, logits.data());
      for (int64_t r = 0; r < c.rows; ++r) {
        const float* row = logits.data() + r * c.vocab;
        const float* top = std::max_element(row, row + c.vocab);
        const float tile_max = *std::max_element(row, row + kTile);
        EXPECT_GE(top - row, kTile) << "seed " << seed << ", row " << r;
        // exp of (top - tile max) overflows float: a max from the first tile fails.
        EXPECT_TRUE(std::isinf(std::exp(*top - tile_max))) << "seed " << seed << ", row " << r;
      }
    }
  }
}

TEST(SoftmaxTopkSeedCoverage, SmallTermsMakeTheSameLargeErrorOfALossySumAtEverySeed) {
  const auto cases = cases_of(Data::small_terms);
  ASSERT_FALSE(cases.empty());
  for (const TopkCase& c : cases) {
    ASSERT_GE(c.vocab, 262144);
    std::vector<float> logits(static_cast<size_t>(c.rows * c.vocab));
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
      generate_logits(c, seed, logits.data());
      for (int64_t r = 0; r < c.rows; ++r) {
        const float* row = logits.data() + r * c.vocab;
        const auto top = static_cast<size_t>(std::max_element(row, row + c.vocab) - row);
        ASSERT_LT(top, static_cast<size_t>(kTile)) << "seed " << seed;
        double exact = 0;
        float sequential = 0, skipping = 0;
        for (int64_t j = 0; j < c.vocab; ++j) {
          const float e = std::exp(row[j] - row[top]);
          exact += e;
          sequential += e;                           // one float accumulator, left to right
          skipping += e < 1.1920929e-7f ? 0.0f : e;  // terms below float epsilon skipped
        }
        // Both lossy sums are off by about 1.06% at every seed: over thirty
        // times the tolerance, never near it.
        EXPECT_GT(std::fabs(sequential - exact) / exact, 30 * kRtol) << "seed " << seed << ", row " << r;
        EXPECT_GT(std::fabs(skipping - exact) / exact, 30 * kRtol) << "seed " << seed << ", row " << r;
      }
    }
  }
}

// The columns of the k largest logits of a row (ties by column).
std::vector<int64_t> top_columns(const float* row, int64_t vocab, int64_t k) {
  std::vector<int64_t> columns(static_cast<size_t>(vocab));
  for (int64_t j = 0; j < vocab; ++j) columns[static_cast<size_t>(j)] = j;
  std::partial_sort(columns.begin(), columns.begin() + k, columns.end(),
                    [&](int64_t a, int64_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  columns.resize(static_cast<size_t>(k));
  std::sort(columns.begin(), columns.end());
  return columns;
}

// Calls `check(case, seed, row)` for every row of every case of `data` at kSeeds seeds.
template <typename Check>
void every_row(Data data, Check check) {
  const auto cases = cases_of(data);
  ASSERT_FALSE(cases.empty()) << data_name(data);
  for (const TopkCase& c : cases) {
    // Each row is drawn from its own seed (derive_seed(seed, row)), so the
    // first two rows of a case with fewer rows are those of the case.
    TopkCase first = c;
    first.rows = std::min<int64_t>(c.rows, 2);
    std::vector<float> logits(static_cast<size_t>(first.rows * c.vocab));
    std::vector<float> whole(static_cast<size_t>(c.rows * c.vocab));
    generate_logits(c, 0, whole.data());
    generate_logits(first, 0, logits.data());
    ASSERT_TRUE(std::equal(logits.begin(), logits.end(), whole.begin())) << "rows depend on the case's row count";
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
      generate_logits(first, seed, logits.data());
      for (int64_t r = 0; r < first.rows; ++r) check(c, seed, logits.data() + r * c.vocab);
    }
  }
}

TEST(SoftmaxTopkSeedCoverage, StructuralRowsHaveTheirStructureAtEverySeed) {
  every_row(Data::cluster_warp, [](const TopkCase& c, uint64_t seed, const float* row) {
    const auto top = top_columns(row, c.vocab, c.k);
    EXPECT_EQ(top.front() / 32, top.back() / 32) << "seed " << seed << ": winners span warp slices";
    EXPECT_GT(top.front(), 31) << "seed " << seed << ": winners in the first slice";
    EXPECT_GT(row[top.back()], row[top.front()] - 2.0f);  // lifted together, far above the rest
  });
  every_row(Data::cluster_tile, [](const TopkCase& c, uint64_t seed, const float* row) {
    const auto top = top_columns(row, c.vocab, c.k);
    EXPECT_EQ(top.front() / kTile, top.back() / kTile) << "seed " << seed;
    EXPECT_GE(top.front(), kTile) << "seed " << seed << ": winners in the first tile";
  });
  every_row(Data::cluster_end, [](const TopkCase& c, uint64_t seed, const float* row) {
    EXPECT_EQ(top_columns(row, c.vocab, c.k).front(), c.vocab - c.k) << "seed " << seed;
  });
  every_row(Data::ascending, [](const TopkCase& c, uint64_t seed, const float* row) {
    EXPECT_TRUE(std::is_sorted(row, row + c.vocab)) << "seed " << seed;
  });
  every_row(Data::descending, [](const TopkCase& c, uint64_t seed, const float* row) {
    EXPECT_TRUE(std::is_sorted(row, row + c.vocab, std::greater<float>())) << "seed " << seed;
  });
  every_row(Data::tile_ties, [](const TopkCase& c, uint64_t seed, const float* row) {
    const float top = *std::max_element(row, row + c.vocab);
    std::vector<int64_t> tied;
    for (int64_t j = 0; j < c.vocab; ++j) {
      if (row[j] == top) tied.push_back(j);
    }
    EXPECT_GT(static_cast<int64_t>(tied.size()), c.k) << "seed " << seed << ": no tie at the k-th place";
    EXPECT_NE(tied.front() / kTile, tied.back() / kTile) << "seed " << seed << ": ties within one tile";
  });
  every_row(Data::masked_first_tile, [](const TopkCase& c, uint64_t seed, const float* row) {
    EXPECT_TRUE(std::all_of(row, row + kTile, [](float x) { return std::isinf(x) && x < 0; })) << "seed " << seed;
    EXPECT_GE(c.vocab - kTile, c.k) << "fewer finite columns than k";
  });
}

TEST(SoftmaxTopkSeedCoverage, SomeCaseHasMoreRowsThanAGridDimension) {
  bool found = false;
  for (const auto& spec : harness::find_challenge("softmax_topk").cases())
    found = found || (!spec.params.contains("drawn") && topk_case_of(spec, 0).rows > 65536);
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace softmax_topk
