// The checker accepts every valid answer (ties either way, masked entries)
// and rejects each kind of wrong answer; its probability tolerance sits
// between float32 rounding and bf16 rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "softmax_topk/host/check.h"
#include "softmax_topk/host/data.h"

namespace softmax_topk {
namespace {

struct Answer {
  TopkCase c;
  std::vector<float> logits;
  std::vector<float> probs;
  std::vector<int32_t> indices;

  harness::CheckReport check(Tolerance tol = {}) const {
    return check_answer(c, logits.data(), probs.data(), indices.data(), tol);
  }
};

// The challenge's trusted answer (float64 rounded to float32) for a case.
Answer solved(TopkCase c, uint64_t seed = 3) {
  Answer a{c, std::vector<float>(static_cast<size_t>(c.rows * c.vocab)),
           std::vector<float>(static_cast<size_t>(c.rows * c.k)),
           std::vector<int32_t>(static_cast<size_t>(c.rows * c.k))};
  generate_logits(c, seed, a.logits.data());
  harness::TensorSpec spec{"logits", harness::DType::f32, {c.rows, c.vocab}};
  harness::find_challenge("softmax_topk")
      .solve("softmax_topk", {{"rows", c.rows}, {"vocab", c.vocab}, {"k", c.k}}, {{"logits", {&spec, a.logits.data()}}},
             {{"probs", a.probs.data()}, {"indices", a.indices.data()}});
  return a;
}

TEST(SoftmaxTopkChecker, TheTrustedAnswerPassesOnEveryKindOfData) {
  for (Data data : {Data::normal, Data::ties, Data::equal, Data::masked, Data::offset, Data::uniform, Data::dominant,
                    Data::one_finite}) {
    const double amount = data == Data::masked ? 0.99 : data == Data::offset ? -100 : data == Data::uniform ? 1e4 : 60;
    const Answer a = solved({8, 1000, 32, data, amount});
    const auto report = a.check();
    EXPECT_TRUE(report.ok) << data_name(data) << ": " << report.message;
    EXPECT_EQ(report.metrics["violations"], 0);
  }
}

TEST(SoftmaxTopkChecker, TiesAtTheBoundaryMayBeBrokenEitherWay) {
  TopkCase c{1, 6, 2, Data::normal, 0};
  Answer a{c, {1, 5, 3, 3, 3, 0}, {}, {1, 4}};  // column 4 instead of 2 or 3: all tie at 3
  double sum = 0;
  for (float x : a.logits) sum += std::exp(x);
  a.probs = {static_cast<float>(std::exp(5.0) / sum), static_cast<float>(std::exp(3.0) / sum)};
  EXPECT_TRUE(a.check().ok) << a.check().message;
  a.indices = {1, 0};  // logit 1 chosen while three 3s are left out
  const auto report = a.check();
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.message.find("not a top-k"), std::string::npos) << report.message;
}

TEST(SoftmaxTopkChecker, EachKindOfWrongAnswerIsRejectedAndNamed) {
  const Answer good = solved({4, 500, 8, Data::normal, 0});
  struct Mutation {
    const char* expected;
    std::function<void(Answer&)> apply;
  };
  const std::vector<Mutation> mutations = {
      {"outside [0, vocab)", [](Answer& a) { a.indices[3] = 500; }},
      {"outside [0, vocab)", [](Answer& a) { a.indices[0] = -1; }},
      {"repeated indices", [](Answer& a) { a.indices[9] = a.indices[8]; }},
      {"not a top-k",
       [](Answer& a) {
         // Replace the 8th winner of row 0 by a column that is not a winner.
         for (int32_t col = 0; col < 500; ++col) {
           bool chosen = false;
           for (int j = 0; j < 8; ++j) chosen = chosen || a.indices[static_cast<size_t>(j)] == col;
           if (!chosen && a.logits[static_cast<size_t>(col)] < a.logits[static_cast<size_t>(a.indices[7])]) {
             a.indices[7] = col;
             break;
           }
         }
       }},
      {"non-increasing order",
       [](Answer& a) {
         std::swap(a.indices[0], a.indices[1]);
         std::swap(a.probs[0], a.probs[1]);
       }},
      {"beyond atol", [](Answer& a) { a.probs[5] *= 1.0f + 3e-4f; }},
      {"beyond atol", [](Answer& a) { a.probs[2] = std::nanf(""); }},
      {"beyond atol", [](Answer& a) { a.probs[2] = 0; }},
  };
  for (const auto& m : mutations) {
    Answer bad = good;
    m.apply(bad);
    const auto report = bad.check();
    EXPECT_FALSE(report.ok) << m.expected;
    EXPECT_NE(report.message.find(m.expected), std::string::npos) << report.message;
  }
}

TEST(SoftmaxTopkChecker, ProbabilityToleranceSitsBetweenFloatAndBf16Rounding) {
  const Answer good = solved({16, 32000, 64, Data::normal, 0});
  // float32 rounding of the float64 answer is far inside the tolerance.
  EXPECT_LT(good.check().metrics["probs_max_rel_error"].get<double>(), 1e-6);
  // Errors of a few float32 accumulations (3e-5) still pass...
  Answer near = good;
  for (size_t i = 0; i < near.probs.size(); ++i) near.probs[i] *= 1.0f + (i % 2 ? 3e-5f : -3e-5f);
  EXPECT_TRUE(near.check().ok) << near.check().message;
  // ...bf16 rounding of the probabilities (8 significant bits) does not.
  Answer bf16 = good;
  for (float& p : bf16.probs) {
    uint32_t bits;
    std::memcpy(&bits, &p, 4);
    bits = (bits + 0x8000u) & 0xFFFF0000u;
    std::memcpy(&p, &bits, 4);
  }
  const auto report = bf16.check();
  EXPECT_FALSE(report.ok);
  EXPECT_GT(report.metrics["probs_max_rel_error"].get<double>(), 1e-3);
}

TEST(SoftmaxTopkChecker, MaskedWinnersMustHaveProbabilityZero) {
  const float inf = std::numeric_limits<float>::infinity();
  TopkCase c{1, 4, 3, Data::masked, 0.5};
  Answer a{c, {-inf, 0.0f, -inf, 0.0f}, {0.5f, 0.5f, 0.0f}, {1, 3, 2}};
  EXPECT_TRUE(a.check().ok) << a.check().message;
  a.probs[2] = 1e-6f;
  EXPECT_FALSE(a.check().ok);
}

// The refresh between rounds of timed calls (StatelessCase::refresh): the
// row keeps its values, so its probabilities; its top index moves, so an
// answer remembered from before the refresh fails in every row.
TEST(SoftmaxTopkChecker, ARefreshMakesTheAnswerFromBeforeWrongInEveryRow) {
  const TopkCase c{8, 4096, 8, Data::normal, 0};
  const Answer before = solved(c);
  for (uint64_t seed : {1, 2, 3}) {
    Answer after = before;
    move_each_row_maximum(c, seed, after.logits.data());
    for (int64_t r = 0; r < c.rows; ++r) {
      const auto row = static_cast<size_t>(r * c.vocab), vocab = static_cast<size_t>(c.vocab);
      std::vector<float> a(before.logits.begin() + row, before.logits.begin() + row + vocab);
      std::vector<float> b(after.logits.begin() + row, after.logits.begin() + row + vocab);
      EXPECT_EQ(std::count_if(a.begin(), a.end(), [&, j = size_t{0}](float v) mutable { return v != b[j++]; }), 2);
      std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
      EXPECT_EQ(a, b) << "row " << r << " lost or gained a value";
      // The remembered answer, for this row alone.
      const TopkCase one{1, c.vocab, c.k, c.data, 0};
      const auto report = check_answer(one, after.logits.data() + row, before.probs.data() + r * c.k,
                                       before.indices.data() + r * c.k, Tolerance{});
      EXPECT_FALSE(report.ok) << "seed " << seed << " row " << r;
    }
    const Answer fresh = [&] {
      Answer a = after;
      harness::TensorSpec spec{"logits", harness::DType::f32, {c.rows, c.vocab}};
      harness::find_challenge("softmax_topk")
          .solve("softmax_topk", {{"rows", c.rows}, {"vocab", c.vocab}, {"k", c.k}},
                 {{"logits", {&spec, a.logits.data()}}}, {{"probs", a.probs.data()}, {"indices", a.indices.data()}});
      return a;
    }();
    EXPECT_TRUE(fresh.check().ok) << fresh.check().message;
  }
}

// The element the refresh moves is the one std::max_element names: the
// first of tied maxima, one in a row's tail past the last whole block of 16,
// and wherever a NaN leaves it.
TEST(SoftmaxTopkChecker, ARefreshMovesTheFirstMaximumWhereverItIs) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const size_t vocab = 37;
  std::vector<std::vector<float>> rows;
  auto row = [&](std::initializer_list<std::pair<size_t, float>> set, float fill) {
    std::vector<float> r(vocab, fill);
    for (auto [at, value] : set) r[at] = value;
    rows.push_back(r);
  };
  row({{5, 3.0f}, {30, 3.0f}}, 1.0f);   // tied: the first
  row({{36, 2.0f}}, 1.0f);              // in the tail
  row({{0, 9.0f}}, 1.0f);               // the first element
  row({{3, nan}, {20, 5.0f}}, 1.0f);    // a NaN before the maximum
  row({{0, nan}, {20, 5.0f}}, 1.0f);    // a NaN first
  row({}, -inf);                        // nothing but -inf
  row({{7, -0.0f}, {9, 0.0f}}, -1.0f);  // signed zeros
  const auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<float> before = rows[i];
    const auto top = static_cast<size_t>(std::max_element(before.begin(), before.end()) - before.begin());
    std::vector<float> after = before;
    move_each_row_maximum(TopkCase{1, static_cast<int64_t>(vocab), 1, Data::normal, 0}, 7 + i, after.data());
    // Swapped with some other element, everything else as it was.
    bool swapped = false;
    for (size_t j = 0; j < vocab && !swapped; ++j) {
      if (j == top || !same(after[j], before[top]) || !same(after[top], before[j])) continue;
      swapped = true;
      for (size_t k = 0; k < vocab; ++k) {
        if (k != j && k != top) swapped = swapped && same(after[k], before[k]);
      }
    }
    EXPECT_TRUE(swapped) << "row " << i << ": its maximum at " << top << " was not the element moved";
  }
}

}  // namespace
}  // namespace softmax_topk
