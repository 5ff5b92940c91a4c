// The attention checker accepts the trusted answer and sound float32 code
// on every kind of data, and rejects realistic wrong answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "attention/host/check.h"
#include "attention/host/data.h"
#include "attention/sdpa_reference.h"
#include "harness/challenge_api/challenge.h"
#include "harness/challenge_api/input_refresh.h"
#include "harness/definitions/challenge_config.h"

namespace attention {
namespace {

// The tolerances as challenge.json sets them.
Tolerances configured_tolerances() { return harness::find_challenge("attention").element_tolerances(); }

using Vec = std::vector<float>;

// Textbook attention in float32 throughout, one row at a time: the sound
// float32 implementation every tolerance must let pass.
struct Float32Attention {
  const AttnCase& c;
  int64_t kv_of(int64_t head) const { return head / c.heads_q * c.heads_kv + head % c.heads_q / c.group(); }
  int64_t visible(int64_t i) const { return reference::sdpa_visible_keys({c.n_q, c.n_kv, c.dim, 1.0, c.causal}, i); }
  // p of query row r (head-major), over its visible keys.
  Vec probabilities(const float* q, const float* k, int64_t r, float* lse) const {
    const int64_t head = r / c.n_q, n = visible(r % c.n_q);
    const float* keys = k + kv_of(head) * c.n_kv * c.dim;
    Vec p(static_cast<size_t>(n));
    float max = -std::numeric_limits<float>::infinity(), sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t d = 0; d < c.dim; ++d) s += q[r * c.dim + d] * keys[j * c.dim + d];
      p[static_cast<size_t>(j)] = s * c.scale();
      max = std::max(max, p[static_cast<size_t>(j)]);
    }
    for (float& x : p) sum += (x = std::exp(x - max));
    for (float& x : p) x /= sum;
    if (lse != nullptr) *lse = n == 0 ? -std::numeric_limits<float>::infinity() : max + std::log(sum);
    return p;
  }
  void forward(const float* q, const float* k, const float* v, float* o, float* lse) const {
    for (int64_t r = 0; r < c.q_rows(); ++r) {
      const Vec p = probabilities(q, k, r, lse + r);
      const float* values = v + kv_of(r / c.n_q) * c.n_kv * c.dim;
      for (int64_t d = 0; d < c.dim; ++d) {
        float sum = 0;
        for (size_t j = 0; j < p.size(); ++j) sum += p[j] * values[static_cast<int64_t>(j) * c.dim + d];
        o[r * c.dim + d] = sum;
      }
    }
  }
  void backward(const float* q, const float* k, const float* v, const float* o, const float* dout, float* dq, float* dk,
                float* dv) const {
    std::fill(dk, dk + c.kv_rows() * c.dim, 0.0f);
    std::fill(dv, dv + c.kv_rows() * c.dim, 0.0f);
    for (int64_t r = 0; r < c.q_rows(); ++r) {
      const Vec p = probabilities(q, k, r, nullptr);
      const int64_t kv = kv_of(r / c.n_q);
      float row_term = 0;
      for (int64_t d = 0; d < c.dim; ++d) row_term += dout[r * c.dim + d] * o[r * c.dim + d];
      std::fill(dq + r * c.dim, dq + (r + 1) * c.dim, 0.0f);
      for (size_t j = 0; j < p.size(); ++j) {
        const int64_t key = (kv * c.n_kv + static_cast<int64_t>(j)) * c.dim;
        float dp = 0;
        for (int64_t d = 0; d < c.dim; ++d) dp += dout[r * c.dim + d] * v[key + d];
        const float ds = p[j] * (dp - row_term);
        for (int64_t d = 0; d < c.dim; ++d) {
          dq[r * c.dim + d] += c.scale() * ds * k[key + d];
          dk[key + d] += c.scale() * ds * q[r * c.dim + d];
          dv[key + d] += p[j] * dout[r * c.dim + d];
        }
      }
    }
  }
};

struct Answer {
  AttnCase c;
  Vec q, k, v, dout, o, lse, dq, dk, dv;
  explicit Answer(const AttnCase& ac, uint64_t seed = 5) : c(ac) {
    const auto qn = static_cast<size_t>(c.q_rows() * c.dim), kvn = static_cast<size_t>(c.kv_rows() * c.dim);
    q.resize(qn), dout.resize(qn), o.resize(qn), dq.resize(qn), k.resize(kvn), v.resize(kvn), dk.resize(kvn),
        dv.resize(kvn), lse.resize(static_cast<size_t>(c.q_rows()));
    generate_inputs(c, seed, q.data(), k.data(), v.data(), dout.data());
    forward_of(c, q.data(), k.data(), v.data(), o.data(), lse.data());
    backward_of(c, q.data(), k.data(), v.data(), dout.data(), dq.data(), dk.data(), dv.data());
  }
  ForwardTensors forward_tensors() const { return {q.data(), k.data(), v.data(), o.data(), lse.data()}; }
  BackwardTensors backward_tensors() const {
    return {q.data(), k.data(), v.data(), o.data(), lse.data(), dout.data(), dq.data(), dk.data(), dv.data()};
  }
  harness::CheckReport forward() const { return check_forward(c, forward_tensors(), configured_tolerances()); }
  harness::CheckReport backward() const { return check_backward(c, backward_tensors(), configured_tolerances()); }
};

std::vector<AttnCase> shapes_of_every_kind() {
  std::vector<AttnCase> shapes;
  for (Data data : {Data::normal, Data::huge, Data::tiny, Data::flat, Data::max_jumps, Data::one_hot}) {
    shapes.push_back({1, 2, 2, 70, 150, 64, false, data});
    shapes.push_back({1, 4, 2, 90, 40, 32, true, data});  // the first 50 queries see no key
  }
  shapes.push_back({1, 2, 2, 8, 2000, 64, false});
  return shapes;
}

std::string label(const AttnCase& c) {
  return data_name(c.data) + (c.causal ? " causal " : " ") + std::to_string(c.n_q) + "x" + std::to_string(c.n_kv);
}

TEST(AttentionChecker, TheTrustedAnswerPassesOnEveryKindOfData) {
  for (const AttnCase& c : shapes_of_every_kind()) {
    const Answer a(c);
    EXPECT_TRUE(a.forward().ok) << label(c) << ": " << a.forward().message;
    EXPECT_TRUE(a.backward().ok) << label(c) << ": " << a.backward().message;
  }
}

TEST(AttentionChecker, SoundFloat32PassesOnEveryKindOfData) {
  double most_used = 0;
  for (const AttnCase& c : shapes_of_every_kind()) {
    Answer a(c);
    const Float32Attention f32{c};
    f32.forward(a.q.data(), a.k.data(), a.v.data(), a.o.data(), a.lse.data());
    const harness::CheckReport forward = a.forward();
    EXPECT_TRUE(forward.ok) << label(c) << ": " << forward.message;
    // The backward is given the harness's own forward, as in a case.
    forward_of(c, a.q.data(), a.k.data(), a.v.data(), a.o.data(), a.lse.data());
    f32.backward(a.q.data(), a.k.data(), a.v.data(), a.o.data(), a.dout.data(), a.dq.data(), a.dk.data(), a.dv.data());
    const harness::CheckReport backward = a.backward();
    EXPECT_TRUE(backward.ok) << label(c) << ": " << backward.message;
    for (const auto* report : {&forward, &backward}) {
      for (const auto& [key, value] : report->metrics.items()) {
        if (key.find("_tolerance_used") != std::string::npos) most_used = std::max(most_used, value.get<double>());
      }
    }
  }
  // Headroom: sound code uses well under its tolerance, not all of it.
  EXPECT_LT(most_used, 0.5);
}

TEST(AttentionChecker, RealisticMistakesAreRejected) {
  const AttnCase c{1, 4, 2, 100, 100, 64, true};
  const std::vector<std::pair<const char*, std::function<void(Answer&)>>> forward_mistakes = {
      {"lse saved as the row's maximum",
       [](Answer& a) {
         for (size_t r = 0; r < a.lse.size(); ++r) a.lse[r] -= std::log1p(1.0f);
       }},
      {"o of one row off by 1e-3 of its scale", [](Answer& a) { a.o[777] += 4e-3f; }},
      {"a row that sees a key answered as masked", [](Answer& a) { a.lse[5] = -INFINITY; }},
  };
  for (const auto& [what, mistake] : forward_mistakes) {
    Answer a(c);
    mistake(a);
    EXPECT_FALSE(a.forward().ok) << what;
  }
  const std::vector<std::pair<const char*, std::function<void(Answer&)>>> backward_mistakes = {
      {"dk summed over half of each group",
       [](Answer& a) {
         for (float& x : a.dk) x *= 0.5f;
       }},
      {"dv of the last key off by 1e-3 of its scale", [](Answer& a) { a.dv.back() += 5e-3f; }},
      {"dq of one element off by 5e-2", [](Answer& a) { a.dq[3] += 5e-2f; }},
  };
  for (const auto& [what, mistake] : backward_mistakes) {
    Answer a(c);
    mistake(a);
    EXPECT_FALSE(a.backward().ok) << what;
  }
}

TEST(AttentionChecker, AQueryThatSeesNoKeyMustHoldZeroAndMinusInfinity) {
  const AttnCase c{1, 1, 1, 6, 3, 8, true};  // queries 0-2 see no key
  for (const auto& [what, mistake] : std::vector<std::pair<const char*, std::function<void(Answer&)>>>{
           {"lse 0", [](Answer& a) { a.lse[1] = 0.0f; }},
           {"lse NaN", [](Answer& a) { a.lse[1] = NAN; }},
           {"o NaN", [](Answer& a) { a.o[8] = NAN; }},
           {"o tiny", [](Answer& a) { a.o[8] = 1e-30f; }}}) {
    Answer a(c);
    EXPECT_TRUE(a.forward().ok) << a.forward().message;
    mistake(a);
    const harness::CheckReport report = a.forward();
    EXPECT_FALSE(report.ok) << what;
    EXPECT_NE(report.message.find("sees no key"), std::string::npos) << what << ": " << report.message;
  }
}

// Between timed rounds: after a refresh, the answer from before is wrong in
// every row the spot check may pick.
TEST(AttentionChecker, ARefreshMakesTheAnswerFromBeforeWrongInEveryRow) {
  const Tolerances tolerances = configured_tolerances();
  const AttnCase c{1, 4, 2, 40, 70, 32, false};
  Answer forward(c);
  harness::swap_two_in_each_row(forward.v.data(), c.kv_rows(), c.dim, 9);
  for (int64_t row = 0; row < c.q_rows(); ++row) {
    EXPECT_FALSE(check_forward_row(c, forward.forward_tensors(), row, tolerances).ok) << "forward row " << row;
  }
  AttnCase b = c;
  b.op = Op::backward;
  Answer backward(b);
  harness::swap_two_in_each_row(backward.dout.data(), b.q_rows(), b.dim, 9);
  for (int64_t row = 0; row < b.q_rows(); ++row) {
    EXPECT_FALSE(check_backward_row(b, backward.backward_tensors(), row, tolerances).ok) << "backward row " << row;
  }
  // And the fresh answer passes every row.
  backward_of(b, backward.q.data(), backward.k.data(), backward.v.data(), backward.dout.data(), backward.dq.data(),
              backward.dk.data(), backward.dv.data());
  for (int64_t row = 0; row < b.q_rows(); ++row) {
    const harness::CheckReport report = check_backward_row(b, backward.backward_tensors(), row, tolerances);
    EXPECT_TRUE(report.ok) << "row " << row << ": " << report.message;
  }
}

}  // namespace
}  // namespace attention

namespace attention {
namespace {

// Past kCheckedFlops the full checks cover a sample of kv heads: the same
// for the same seed, and exactly those heads' outputs are judged.
TEST(AttentionChecker, LargeShapesCheckASampleOfKvHeadsExactly) {
  AttnCase gpu{4, 32, 8, 4096, 4096, 128, true};
  const std::vector<int64_t> sample = checked_kv_heads(gpu, 7);
  EXPECT_GE(sample.size(), 2u);
  EXPECT_LT(sample.size(), 8u);
  EXPECT_EQ(sample, checked_kv_heads(gpu, 7));
  EXPECT_NE(sample, checked_kv_heads(gpu, 8));
  EXPECT_EQ(checked_kv_heads({1, 4, 2, 64, 64, 32, true}, 7), (std::vector<int64_t>{0, 1}));

  for (Op op : {Op::forward, Op::backward}) {
    const AttnCase c{2, 4, 2, 20, 30, 16, true, Data::normal, op};  // kv heads 0-3, query heads 0-7
    Answer a(c);
    const Tolerances tolerances = configured_tolerances();
    auto judged = [&](const std::vector<int64_t>& heads) {
      return op == Op::forward ? check_forward(c, a.forward_tensors(), tolerances, heads)
                               : check_backward(c, a.backward_tensors(), tolerances, heads);
    };
    EXPECT_TRUE(judged({1, 2}).ok) << judged({1, 2}).message;
    // Query head 5 (batch 1, head 1) reads kv head 2; its outputs are wrong.
    const size_t row = (5 * 20 + 19) * 16;
    (op == Op::forward ? a.o : a.dq)[row] += 1.0f;
    EXPECT_FALSE(judged({1, 2}).ok);
    EXPECT_FALSE(judged({2}).ok);
    EXPECT_TRUE(judged({0, 1, 3}).ok) << judged({0, 1, 3}).message;
    if (op == Op::backward) {
      a.dk[(3 * 30 + 4) * 16] += 1.0f;  // kv head 3's key 4
      EXPECT_TRUE(judged({0, 1}).ok);
      EXPECT_FALSE(judged({3}).ok);
    }
  }
}

}  // namespace
}  // namespace attention
