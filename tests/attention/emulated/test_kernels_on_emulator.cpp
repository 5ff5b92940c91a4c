// The attention CUDA kernels, run on the host by the warp emulator and
// judged by the challenge's own checks and tolerances: the tensor-core
// kernels (3xTF32 mma) and, as the emulator's control, cuda-fast's SIMT
// kernels, which pass every case on an H200 (reports/gpu-h200-attention).
// Shapes are small (the emulator runs a thread at a time) but leave every
// tile's tail partial, cross the padded widths and the float4 path, and
// take the data that breaks a careless online softmax.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attention/host/check.h"
#include "attention/host/data.h"
#include "harness/challenge_api/challenge.h"
#include "kernels_on_emulator.h"

namespace attention::emulated {
namespace {

Tolerances configured_tolerances() { return harness::find_challenge("attention").element_tolerances(); }

struct Named {
  std::string name;
  AttnCase c;
};

AttnCase shape(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t n_q, int64_t n_kv, int64_t dim, bool causal,
               Data data = Data::normal) {
  AttnCase c;
  c.batch = batch;
  c.heads_q = heads_q;
  c.heads_kv = heads_kv;
  c.n_q = n_q;
  c.n_kv = n_kv;
  c.dim = dim;
  c.causal = causal;
  c.data = data;
  return c;
}

// 64-row query tiles and 64-key steps (32 queries a step in the dk/dv
// kernel): 70 and 133 leave 6- and 5-row tails, 65 a one-row tail.
std::vector<Named> cases() {
  return {
      {"tails, dim 40 (float4 loads)", shape(1, 2, 1, 70, 133, 40, false)},
      {"tails, causal, GQA 2", shape(1, 2, 1, 70, 133, 40, true)},
      {"GQA 4 over a batch of 2, dim 33 (scalar loads)", shape(2, 4, 1, 17, 65, 33, true)},
      {"causal with more queries than keys: 60 rows see no key", shape(1, 1, 1, 100, 40, 64, true)},
      {"one query, 200 keys, dim 32", shape(1, 1, 1, 1, 200, 32, false)},
      {"one key, dim 96", shape(1, 1, 1, 65, 1, 96, false)},
      {"dim 128, causal, N = 2^6 + 1", shape(1, 1, 1, 65, 65, 128, true)},
      {"max_jumps: the row maximum moves by thousands between key tiles",
       shape(1, 1, 1, 64, 192, 64, true, Data::max_jumps)},
      {"one_hot rows", shape(1, 2, 2, 40, 96, 64, false, Data::one_hot)},
      {"huge v, tiny dout", shape(1, 1, 1, 33, 70, 64, false, Data::huge)},
      {"tiny v, huge dout", shape(1, 1, 1, 33, 70, 64, true, Data::tiny)},
  };
}

// An output with margins that must keep their sentinel: the kernels write
// every element of their outputs and nothing beside them.
class Guarded {
 public:
  explicit Guarded(int64_t n) : n_(static_cast<size_t>(n)), storage_(n_ + 2 * kMargin, kSentinel) {}
  float* data() { return storage_.data() + kMargin; }
  const float* data() const { return storage_.data() + kMargin; }
  bool margins_intact() const {
    for (size_t i = 0; i < kMargin; ++i)
      if (storage_[i] != kSentinel || storage_[kMargin + n_ + i] != kSentinel) return false;
    return true;
  }
  bool all_written() const {
    for (size_t i = 0; i < n_; ++i)
      if (storage_[kMargin + i] == kSentinel) return false;
    return true;
  }

 private:
  static constexpr size_t kMargin = 64;
  static constexpr float kSentinel = 12345.5f;
  size_t n_;
  std::vector<float> storage_;
};

struct Inputs {
  explicit Inputs(const AttnCase& c, uint64_t seed)
      : q(static_cast<size_t>(c.q_rows() * c.dim)),
        k(static_cast<size_t>(c.kv_rows() * c.dim)),
        v(k.size()),
        dout(q.size()) {
    generate_inputs(c, seed, q.data(), k.data(), v.data(), dout.data());
  }
  std::vector<float> q, k, v, dout;
};

// The most of each tolerance a kernel family used over the cases.
using Usage = std::map<std::string, double>;

void add_usage(const harness::CheckReport& report, Usage& usage) {
  const std::string suffix = "_tolerance_used";
  for (const auto& [key, value] : report.metrics.items()) {
    if (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
      usage[key] = std::max(usage[key], value.get<double>());
  }
}

// Printed for the tolerance argument (challenges/attention/README.md), and
// held to the headroom every sound implementation keeps
// (AttentionChecker.SoundFloat32CodePasses...): under half of each.
void report_usage(const char* kernels, const Usage& usage) {
  std::string line;
  for (const auto& [key, most] : usage) {
    line += " " + key + " " + std::to_string(most);
    EXPECT_LT(most, 0.5) << kernels << ": " << key;
  }
  std::printf("%s, worst over the cases:%s\n", kernels, line.c_str());
}

void expect_forward_passes(ForwardFn forward, const Named& named, uint64_t seed, Usage& usage) {
  AttnCase c = named.c;
  c.op = Op::forward;
  const Inputs in(c, seed);
  Guarded o(c.q_rows() * c.dim), lse(c.q_rows());
  const std::string error = forward(c, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
  ASSERT_EQ(error, "") << named.name;
  EXPECT_TRUE(o.margins_intact() && lse.margins_intact()) << named.name << ": a write beside o or lse";
  EXPECT_TRUE(o.all_written() && lse.all_written()) << named.name << ": an element of o or lse left unwritten";
  const harness::CheckReport report = check_forward(
      c, ForwardTensors{in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data()}, configured_tolerances());
  EXPECT_TRUE(report.ok) << named.name << ": " << report.message;
  add_usage(report, usage);
}

void expect_backward_passes(BackwardFn backward, const Named& named, uint64_t seed, Usage& usage) {
  AttnCase c = named.c;
  c.op = Op::backward;
  const Inputs in(c, seed);
  std::vector<float> o(in.q.size()), lse(static_cast<size_t>(c.q_rows()));
  forward_of(c, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
  Guarded dq(c.q_rows() * c.dim), dk(c.kv_rows() * c.dim), dv(c.kv_rows() * c.dim);
  const std::string error = backward(c, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data(), in.dout.data(),
                                     dq.data(), dk.data(), dv.data());
  ASSERT_EQ(error, "") << named.name;
  EXPECT_TRUE(dq.margins_intact() && dk.margins_intact() && dv.margins_intact())
      << named.name << ": a write beside dq, dk or dv";
  EXPECT_TRUE(dq.all_written() && dk.all_written() && dv.all_written())
      << named.name << ": an element of dq, dk or dv left unwritten";
  const harness::CheckReport report =
      check_backward(c,
                     BackwardTensors{in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data(), in.dout.data(),
                                     dq.data(), dk.data(), dv.data()},
                     configured_tolerances());
  EXPECT_TRUE(report.ok) << named.name << ": " << report.message;
  add_usage(report, usage);
}

constexpr uint64_t kSeed = 20261128;

// Every case under each of the emulator's schedules: in lockstep, and with
// each warp running ahead of the others (a barrier missing between a
// tile's last reads and the next tile's loads shows there).
template <class Check>
void for_every_schedule(const Check& check) {
  const std::pair<warp_emulation::Schedule, const char*> schedules[] = {
      {warp_emulation::Schedule::lockstep, "lockstep"},
      {warp_emulation::Schedule::warp_by_warp_ascending, "warp by warp, ascending"},
      {warp_emulation::Schedule::warp_by_warp_descending, "warp by warp, descending"}};
  for (const auto& [schedule, name] : schedules) {
    SCOPED_TRACE(name);
    warp_emulation::set_schedule(schedule);
    for (const Named& n : cases()) check(n);
  }
  warp_emulation::set_schedule(warp_emulation::Schedule::lockstep);
}

TEST(TensorCoreOnEmulator, TheForwardPassesTheChallengesChecks) {
  Usage usage;
  for_every_schedule([&](const Named& n) { expect_forward_passes(forward_tensor_core, n, kSeed, usage); });
  report_usage("tensor-core forward", usage);
}

TEST(TensorCoreOnEmulator, TheBackwardPassesTheChallengesChecks) {
  Usage usage;
  for_every_schedule([&](const Named& n) { expect_backward_passes(backward_tensor_core, n, kSeed, usage); });
  report_usage("tensor-core backward", usage);
}

// cuda-fast's widths past the tensor-core kernels' 128: dims padded to
// 192 and 256.
std::vector<Named> wide_cases() {
  return {
      {"dim 160, causal, tails", shape(1, 2, 1, 70, 77, 160, true)},
      {"dim 256, max_jumps", shape(1, 1, 1, 33, 130, 256, false, Data::max_jumps)},
  };
}

TEST(SimtOnEmulator, DimsPastTheTensorCoresPassTheChallengesChecks) {
  Usage usage;
  for (const Named& n : wide_cases()) {
    expect_forward_passes(forward_simt, n, kSeed, usage);
    expect_backward_passes(backward_simt, n, kSeed, usage);
  }
}

TEST(SimtOnEmulator, TheForwardPassesTheChallengesChecks) {
  Usage usage;
  for_every_schedule([&](const Named& n) { expect_forward_passes(forward_simt, n, kSeed, usage); });
  report_usage("SIMT forward", usage);
}

TEST(SimtOnEmulator, TheBackwardPassesTheChallengesChecks) {
  Usage usage;
  for_every_schedule([&](const Named& n) { expect_backward_passes(backward_simt, n, kSeed, usage); });
  report_usage("SIMT backward", usage);
}

}  // namespace
}  // namespace attention::emulated
