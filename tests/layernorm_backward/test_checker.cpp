// The layernorm checker accepts the trusted answer on every kind of data and
// rejects realistic wrong answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "harness/runner/challenge.h"
#include "layernorm_backward/host/check.h"
#include "layernorm_backward/host/data.h"

namespace layernorm {
namespace {

const Tolerances kTolerances = {{"y", {1e-5, 1e-5}}, {"dx", {1e-4, 1e-4}}, {"dgamma", {1e-4, 1e-4}}, {"dbeta", {1e-4, 1e-4}}};

struct Answer {
  LnCase c;
  std::vector<float> x, gamma, beta, dy, y, saved, dx, dgamma, dbeta;

  explicit Answer(LnCase lc) : c(lc) {
    const auto n = static_cast<size_t>(c.rows * c.dim), d = static_cast<size_t>(c.dim);
    x.resize(n), dy.resize(n), y.resize(n), dx.resize(n), gamma.resize(d), beta.resize(d), dgamma.resize(d), dbeta.resize(d);
    saved.resize(static_cast<size_t>(2 * c.rows));
    generate_inputs(c, 5, x.data(), gamma.data(), beta.data(), dy.data());
    const auto& challenge = harness::find_challenge("layernorm_backward");
    const harness::TensorSpec xs{"x", harness::DType::f32, {c.rows, c.dim}}, vs{"v", harness::DType::f32, {c.dim}};
    const nlohmann::json scalars = {{"rows", c.rows}, {"dim", c.dim}, {"eps", c.eps}};
    challenge.solve("forward", scalars, {{"x", {&xs, x.data()}}, {"gamma", {&vs, gamma.data()}}, {"beta", {&vs, beta.data()}}},
                    {{"y", y.data()}, {"saved", saved.data()}});
    challenge.solve("backward", scalars, {{"dy", {&xs, dy.data()}}, {"x", {&xs, x.data()}}, {"gamma", {&vs, gamma.data()}}},
                    {{"dx", dx.data()}, {"dgamma", dgamma.data()}, {"dbeta", dbeta.data()}});
  }
  harness::CheckReport forward() const { return check_forward(c, x.data(), gamma.data(), beta.data(), y.data(), kTolerances); }
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
      {"y:", true, [d](Answer& a) { for (auto& v : a.y) v = (v - a.beta[0]) * std::sqrt((d - 1) / d) + a.beta[0]; }},
      {"y:", true, [](Answer& a) { a.y[100] = std::numeric_limits<float>::quiet_NaN(); }},
      {"y:", true, [](Answer& a) { *std::max_element(a.y.begin(), a.y.end()) *= 1.001f; }},
      {"dx:", false, [](Answer& a) { for (auto& v : a.dx) v *= 1.001f; }},
      {"dgamma:", false, [](Answer& a) { for (size_t j = 0; j < a.dgamma.size(); ++j) a.dgamma[j] *= 0.5f; }},
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

}  // namespace
}  // namespace layernorm
