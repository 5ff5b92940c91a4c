// The float64 reference of attention: by hand on a tiny case, the causal
// convention, and gradients against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attention/sdpa_reference.h"

namespace reference {
namespace {

TEST(AttentionReference, ForwardByHand) {
  // Two keys, dim 1: scores 1 * 0 and 1 * ln 3 give p = 1/4, 3/4.
  const SdpaShape s{1, 2, 1, 1.0, false};
  const double q[] = {1.0}, k[] = {0.0, std::log(3.0)}, v[] = {4.0, 8.0};
  double o = 0, lse = 0;
  sdpa_forward_head(s, q, k, v, &o, &lse);
  EXPECT_NEAR(o, 0.25 * 4 + 0.75 * 8, 1e-12);
  EXPECT_NEAR(lse, std::log(1.0 + 3.0), 1e-12);
}

TEST(AttentionReference, TheCausalMaskIsAlignedAtTheBottomRight) {
  // 3 queries over 5 keys: the last query sees every key, each earlier one
  // one key fewer; 5 queries over 3 keys: the first two see none.
  EXPECT_EQ(sdpa_visible_keys({3, 5, 8, 1.0, true}, 0), 3);
  EXPECT_EQ(sdpa_visible_keys({3, 5, 8, 1.0, true}, 2), 5);
  EXPECT_EQ(sdpa_visible_keys({5, 3, 8, 1.0, true}, 0), 0);
  EXPECT_EQ(sdpa_visible_keys({5, 3, 8, 1.0, true}, 1), 0);
  EXPECT_EQ(sdpa_visible_keys({5, 3, 8, 1.0, true}, 2), 1);
  EXPECT_EQ(sdpa_visible_keys({5, 3, 8, 1.0, false}, 0), 3);
}

TEST(AttentionReference, AQueryThatSeesNoKeyHasZeroOutputAndMinusInfinityLse) {
  const SdpaShape s{2, 1, 1, 1.0, true};
  const double q[] = {1.0, 2.0}, k[] = {3.0}, v[] = {5.0};
  double o[2] = {7, 7}, lse[2] = {7, 7};
  sdpa_forward_head(s, q, k, v, o, lse);
  EXPECT_EQ(o[0], 0.0);
  EXPECT_EQ(lse[0], -std::numeric_limits<double>::infinity());
  EXPECT_NEAR(o[1], 5.0, 1e-12);
  EXPECT_NEAR(lse[1], 6.0, 1e-12);
}

// L = sum dout * o, differentiated numerically in every input element.
TEST(AttentionReference, GradientsMatchCentralFiniteDifferences) {
  for (const SdpaShape& s :
       {SdpaShape{3, 4, 2, 0.7, false}, SdpaShape{4, 3, 2, 0.7, true}, SdpaShape{3, 5, 3, 0.5, true}}) {
    std::vector<double> q(static_cast<size_t>(s.n_q * s.dim)), k(static_cast<size_t>(s.n_kv * s.dim)), v(k.size()),
        dout(q.size());
    for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(1.3 * static_cast<double>(i) + 0.2);
    for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.7 * static_cast<double>(i) + 0.1);
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.4 * static_cast<double>(i) - 1.0);
    for (size_t i = 0; i < dout.size(); ++i) dout[i] = std::cos(2.1 * static_cast<double>(i));
    auto loss = [&]() {
      std::vector<double> o(q.size()), lse(static_cast<size_t>(s.n_q));
      sdpa_forward_head(s, q.data(), k.data(), v.data(), o.data(), lse.data());
      double sum = 0;
      for (size_t i = 0; i < o.size(); ++i) sum += dout[i] * o[i];
      return sum;
    };
    std::vector<double> dq(q.size()), dk(k.size(), 0.0), dv(v.size(), 0.0);
    sdpa_backward_head(s, q.data(), k.data(), v.data(), dout.data(), dq.data(), dk.data(), dv.data());
    const double h = 1e-6;
    for (auto [values, grad] : {std::pair{&q, &dq}, std::pair{&k, &dk}, std::pair{&v, &dv}}) {
      for (size_t i = 0; i < values->size(); ++i) {
        const double kept = (*values)[i];
        (*values)[i] = kept + h;
        const double up = loss();
        (*values)[i] = kept - h;
        const double down = loss();
        (*values)[i] = kept;
        EXPECT_NEAR((*grad)[i], (up - down) / (2 * h), 1e-7) << "element " << i << ", causal " << s.causal;
      }
    }
  }
}

}  // namespace
}  // namespace reference
