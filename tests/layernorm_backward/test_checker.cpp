// The layernorm checker accepts the trusted answer on every kind of data and
// rejects realistic wrong answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "layernorm_backward/host/check.h"
#include "layernorm_backward/host/data.h"
#include "layernorm_backward/layernorm_reference.h"

namespace layernorm {
namespace {

const Tolerances kTolerances = {
    {"y", {1e-5, 1e-5}}, {"dx", {1e-4, 1e-4}}, {"dgamma", {1e-4, 1e-4}}, {"dbeta", {1e-4, 1e-4}}};

struct Answer {
  LnCase c;
  std::vector<float> x, gamma, beta, dy, y, saved, dx, dgamma, dbeta;

  explicit Answer(LnCase lc) : c(lc) {
    const auto n = static_cast<size_t>(c.rows * c.dim), d = static_cast<size_t>(c.dim);
    x.resize(n), dy.resize(n), y.resize(n), dx.resize(n), gamma.resize(d), beta.resize(d), dgamma.resize(d),
        dbeta.resize(d);
    saved.resize(static_cast<size_t>(2 * c.rows));
    generate_inputs(c, 5, x.data(), gamma.data(), beta.data(), dy.data());
    const auto& challenge = harness::find_challenge("layernorm_backward");
    const harness::TensorSpec xs{"x", harness::DType::f32, {c.rows, c.dim}}, vs{"v", harness::DType::f32, {c.dim}};
    const nlohmann::json scalars = {{"rows", c.rows}, {"dim", c.dim}, {"eps", c.eps}};
    challenge.solve("forward", scalars,
                    {{"x", {&xs, x.data()}}, {"gamma", {&vs, gamma.data()}}, {"beta", {&vs, beta.data()}}},
                    {{"y", y.data()}, {"saved", saved.data()}});
    challenge.solve("backward", scalars,
                    {{"dy", {&xs, dy.data()}}, {"x", {&xs, x.data()}}, {"gamma", {&vs, gamma.data()}}},
                    {{"dx", dx.data()}, {"dgamma", dgamma.data()}, {"dbeta", dbeta.data()}});
  }
  harness::CheckReport forward() const {
    return check_forward(c, x.data(), gamma.data(), beta.data(), y.data(), kTolerances);
  }
  harness::CheckReport backward() const {
    return check_backward(c, dy.data(), x.data(), gamma.data(), dx.data(), dgamma.data(), dbeta.data(), kTolerances);
  }
};

TEST(LayerNormChecker, TheTrustedAnswerPassesOnEveryKindOfData) {
  for (Data data : {Data::normal, Data::zero, Data::constant, Data::tiny, Data::offset, Data::huge, Data::scaled}) {
    for (int64_t dim : {1, 7, 256}) {
      const Answer a(LnCase{33, dim, data, data == Data::offset ? 1e6 : 0, 1e-5f});
      EXPECT_TRUE(a.forward().ok) << data_name(data) << " d" << dim << ": " << a.forward().message;
      EXPECT_TRUE(a.backward().ok) << data_name(data) << " d" << dim << ": " << a.backward().message;
    }
  }
}

// The forward as sound float32 code computes it: two passes, everything in
// float (sequential sums, the worst a plain loop does), or with the one-pass
// variance E[x^2] - E[x]^2, the classic bug.
std::vector<float> float32_forward(const Answer& a, bool one_pass) {
  const auto dim = static_cast<size_t>(a.c.dim);
  std::vector<float> y(a.x.size());
  for (int64_t r = 0; r < a.c.rows; ++r) {
    const float* x = a.x.data() + static_cast<size_t>(r) * dim;
    float sum = 0, squares = 0;
    for (size_t j = 0; j < dim; ++j) sum += x[j], squares += x[j] * x[j];
    const float mean = sum / static_cast<float>(dim);
    float var = 0;
    if (one_pass) {
      var = std::max(0.0f, squares / static_cast<float>(dim) - mean * mean);
    } else {
      for (size_t j = 0; j < dim; ++j) var += (x[j] - mean) * (x[j] - mean);
      var /= static_cast<float>(dim);
    }
    const float rstd = 1.0f / std::sqrt(var + a.c.eps);
    for (size_t j = 0; j < dim; ++j)
      y[static_cast<size_t>(r) * dim + j] = (x[j] - mean) * rstd * a.gamma[j] + a.beta[j];
  }
  return y;
}

TEST(LayerNormChecker, TheFloat32AllowancePassesSoundFloat32AndNoMore) {
  Tolerances with_allowance = kTolerances;
  for (auto& [name, t] : with_allowance) {
    if (name != "dbeta") t.float32_factor = 2;  // as challenge.json
  }
  for (double offset : {1e3, 1e4, 1e6}) {
    const Answer a(LnCase{64, 1024, Data::offset, offset, 1e-5f});
    const std::vector<float> sound = float32_forward(a, false);
    const std::vector<float> one_pass = float32_forward(a, true);
    // Our float64-internal answer passes either way.
    EXPECT_TRUE(check_forward(a.c, a.x.data(), a.gamma.data(), a.beta.data(), a.y.data(), kTolerances).ok) << offset;
    // Sound float32 fails the plain bound: its error is float32's own...
    EXPECT_FALSE(check_forward(a.c, a.x.data(), a.gamma.data(), a.beta.data(), sound.data(), kTolerances).ok) << offset;
    // ...and passes once the bound allows for the rounded mean.
    const auto report = check_forward(a.c, a.x.data(), a.gamma.data(), a.beta.data(), sound.data(), with_allowance);
    EXPECT_TRUE(report.ok) << offset << ": " << report.message;
    EXPECT_GT(report.metrics.value("precision_loss", 0.0), 0.4) << offset;
    // The one-pass variance stays wrong.
    const auto bug = check_forward(a.c, a.x.data(), a.gamma.data(), a.beta.data(), one_pass.data(), with_allowance);
    EXPECT_FALSE(bug.ok) << offset;
    EXPECT_NE(bug.message.find("2*eps32*F (F = max|gamma| * max(|mean| * rstd) * sqrt(D)"), std::string::npos)
        << bug.message;
  }
  // On well-scaled rows the allowance adds nothing a mistake could hide in.
  const Answer normal(LnCase{64, 1024, Data::normal, 0, 1e-5f});
  const auto report = check_forward(normal.c, normal.x.data(), normal.gamma.data(), normal.beta.data(), normal.y.data(),
                                    with_allowance);
  EXPECT_LT(report.metrics.value("precision_loss", 1.0), 0.2);
}

TEST(LayerNormChecker, RealisticMistakesAreRejected) {
  const Answer good(LnCase{64, 768, Data::normal, 0, 1e-5f});
  struct Mistake {
    const char* expected;
    bool forward;
    std::function<void(Answer&)> apply;
  };
  const float d = 768;
  const std::vector<Mistake> mistakes = {
      // The sample variance (D - 1) scales rstd by sqrt((D-1)/D): 6.5e-4 relative on y at D = 768.
      {"y:", true,
       [d](Answer& a) {
         for (auto& v : a.y) v = (v - a.beta[0]) * std::sqrt((d - 1) / d) + a.beta[0];
       }},
      {"y:", true, [](Answer& a) { a.y[100] = std::numeric_limits<float>::quiet_NaN(); }},
      {"y:", true, [](Answer& a) { *std::max_element(a.y.begin(), a.y.end()) *= 1.001f; }},
      {"dx:", false,
       [](Answer& a) {
         for (auto& v : a.dx) v *= 1.001f;
       }},
      {"dgamma:", false,
       [](Answer& a) {
         for (size_t j = 0; j < a.dgamma.size(); ++j) a.dgamma[j] *= 0.5f;
       }},
      {"dbeta:", false, [](Answer& a) { a.dbeta[3] += 0.01f * std::fabs(a.dbeta[3]) + 0.5f; }},
  };
  for (const auto& m : mistakes) {
    Answer bad = good;
    m.apply(bad);
    const auto report = m.forward ? bad.forward() : bad.backward();
    EXPECT_FALSE(report.ok) << m.expected << " (mistake " << (&m - mistakes.data()) << ")";
    EXPECT_EQ(report.message.rfind(m.expected, 0), 0u) << report.message;
  }
}

TEST(LayerNormChecker, ScaledToleranceTreatsTinyAndHugeGradientsAlike) {
  // At 1e18 magnitudes dx is ~1e-18: the tolerance follows the tensor's scale.
  const Answer huge(LnCase{16, 64, Data::huge, 0, 1e-5f});
  ASSERT_TRUE(huge.backward().ok);
  Answer off = huge;
  for (auto& v : off.dx) v *= 1.001f;
  EXPECT_FALSE(off.backward().ok);
}

// dx of a float32 backward written as the textbook formula, every operation
// in float, optionally without its projection term.
std::vector<float> float_dx(const Answer& a, bool with_projection) {
  const int64_t dim = a.c.dim;
  std::vector<float> dx(a.dx.size());
  for (int64_t r = 0; r < a.c.rows; ++r) {
    const float* x = a.x.data() + r * dim;
    const float* dy = a.dy.data() + r * dim;
    float mean = 0, var = 0, mean_g = 0, mean_gx = 0;
    for (int64_t j = 0; j < dim; ++j) mean += x[j] / static_cast<float>(dim);
    for (int64_t j = 0; j < dim; ++j) var += (x[j] - mean) * (x[j] - mean) / static_cast<float>(dim);
    const float rstd = 1.0f / std::sqrt(var + a.c.eps);
    for (int64_t j = 0; j < dim; ++j) {
      const float g = dy[j] * a.gamma[static_cast<size_t>(j)];
      mean_g += g / static_cast<float>(dim);
      mean_gx += g * (x[j] - mean) * rstd / static_cast<float>(dim);
    }
    for (int64_t j = 0; j < dim; ++j) {
      const float g = dy[j] * a.gamma[static_cast<size_t>(j)];
      const float xhat = (x[j] - mean) * rstd;
      dx[static_cast<size_t>(r * dim + j)] = rstd * (g - mean_g - (with_projection ? xhat * mean_gx : 0.0f));
    }
  }
  return dx;
}

TEST(LayerNormChecker, DxFromCancellingTermsIsJudgedAtTheScaleOfTheTerms) {
  // At dim 2, xhat is +-1 up to eps/var and dx is the small remainder of
  // terms of size rstd * |g|: float32 rounding of those terms is far beyond
  // 1e-4 of max |dx| itself, so a tolerance scaled by max |dx| alone would
  // reject a correct float32 backward. x scaled by 1000 makes eps/var ~1e-11
  // on every row.
  Answer a(LnCase{64, 2, Data::scaled, 0, 1e-5f});
  a.dx = float_dx(a, true);
  const auto report = a.backward();
  EXPECT_TRUE(report.ok) << report.message;

  std::vector<double> x64(a.x.begin(), a.x.end()), dy64(a.dy.begin(), a.dy.end()),
      gamma64(a.gamma.begin(), a.gamma.end());
  std::vector<double> dx_ref(a.dx.size()), dgamma_ref(2), dbeta_ref(2);
  reference::layernorm_backward(dy64.data(), x64.data(), gamma64.data(), a.c.rows, 2, a.c.eps, dx_ref.data(),
                                dgamma_ref.data(), dbeta_ref.data());
  const auto by_max_dx = harness::compare_to_reference(a.dx.data(), dx_ref.data(), dx_ref.size(), kTolerances.at("dx"));
  EXPECT_FALSE(by_max_dx.ok()) << "this data no longer shows the cancellation; worst scaled error "
                               << by_max_dx.max_scaled_error;

  // Dropping the projection term is still caught on the same data.
  Answer wrong = a;
  wrong.dx = float_dx(a, false);
  const auto wrong_report = wrong.backward();
  EXPECT_FALSE(wrong_report.ok);
  EXPECT_NE(wrong_report.message.find("S = max(max|ref|, max rstd*|dy*gamma|)"), std::string::npos)
      << wrong_report.message;
}

// The refresh between rounds of timed calls (StatelessCase::refresh): two
// elements of each row trade places, so the row's statistics (and the saved
// state of a forward) still fit, and the answer from before the refresh is
// wrong in every row: y where x was refreshed, dx where dy was.
TEST(LayerNormChecker, ARefreshMakesTheAnswerFromBeforeWrongInEveryRow) {
  const LnCase c{16, 256, Data::normal, 0, 1e-5f};
  const Answer before(c);
  const auto dim = static_cast<size_t>(c.dim);
  auto refreshed = [&](bool of_x, uint64_t seed) {
    Answer after = before;
    swap_two_in_each_row(c, seed, of_x ? after.x.data() : after.dy.data());
    const auto& challenge = harness::find_challenge("layernorm_backward");
    const harness::TensorSpec xs{"x", harness::DType::f32, {c.rows, c.dim}}, vs{"v", harness::DType::f32, {c.dim}};
    const nlohmann::json scalars = {{"rows", c.rows}, {"dim", c.dim}, {"eps", c.eps}};
    std::vector<float> saved(after.saved.size());
    challenge.solve(
        "forward", scalars,
        {{"x", {&xs, after.x.data()}}, {"gamma", {&vs, after.gamma.data()}}, {"beta", {&vs, after.beta.data()}}},
        {{"y", after.y.data()}, {"saved", saved.data()}});
    EXPECT_EQ(saved, before.saved) << "the row statistics moved";
    challenge.solve(
        "backward", scalars,
        {{"dy", {&xs, after.dy.data()}}, {"x", {&xs, after.x.data()}}, {"gamma", {&vs, after.gamma.data()}}},
        {{"dx", after.dx.data()}, {"dgamma", after.dgamma.data()}, {"dbeta", after.dbeta.data()}});
    return after;
  };
  // In every row, some element off by over ten times the tolerance at the
  // row's largest value.
  auto wrong_in_every_row = [&](const std::vector<float>& remembered, const std::vector<float>& right, double tol) {
    for (size_t r = 0; r < static_cast<size_t>(c.rows); ++r) {
      double largest = 0, off = 0;
      for (size_t j = r * dim; j < (r + 1) * dim; ++j) {
        largest = std::max(largest, std::abs(double{right[j]}));
        off = std::max(off, std::abs(double{remembered[j]} - right[j]));
      }
      if (off <= 10 * tol * (1 + largest)) return false;
    }
    return true;
  };
  for (uint64_t seed : {1, 2, 3}) {
    const Answer x_swapped = refreshed(true, seed);
    EXPECT_EQ(x_swapped.saved, before.saved);
    EXPECT_TRUE(wrong_in_every_row(before.y, x_swapped.y, kTolerances.at("y").rtol)) << seed;
    EXPECT_FALSE(check_forward(c, x_swapped.x.data(), x_swapped.gamma.data(), x_swapped.beta.data(), before.y.data(),
                               kTolerances)
                     .ok);
    EXPECT_TRUE(x_swapped.forward().ok) << x_swapped.forward().message;
    const Answer dy_swapped = refreshed(false, seed);
    EXPECT_TRUE(wrong_in_every_row(before.dx, dy_swapped.dx, kTolerances.at("dx").rtol)) << seed;
    EXPECT_FALSE(check_backward(c, dy_swapped.dy.data(), dy_swapped.x.data(), dy_swapped.gamma.data(), before.dx.data(),
                                before.dgamma.data(), before.dbeta.data(), kTolerances)
                     .ok);
    EXPECT_TRUE(dy_swapped.backward().ok) << dy_swapped.backward().message;
  }
}

}  // namespace
}  // namespace layernorm
