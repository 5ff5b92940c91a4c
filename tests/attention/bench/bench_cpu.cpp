// Google Benchmark: the fast CPU attention kernels against the naive CPU
// baseline (called through its C ABI, exactly as the harness loads it),
// forward and backward separately.
//
// Attention is bound by arithmetic, not memory: a call does O(n^2 dim) work
// on O(n dim) bytes, so one input set is reused across iterations. The rate
// reported is the challenge's FLOP model (challenges/attention/host): 4 * dim
// per (query, visible key) pair, x 2.5 for a backward.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attention.h"
#include "attention/cpu/attention_cpu.h"
#include "forward_flops.h"

namespace {

struct Args {
  int64_t batch, heads_q, heads_kv, n_q, n_kv, dim;
  bool causal;
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(dim)); }
  attention::cpu::Shape shape() const { return {batch, heads_q, heads_kv, n_q, n_kv, dim, scale(), causal}; }
};

// The project's fast kernels.
struct Fast {
  static bool forward(const Args& a, const float* q, const float* k, const float* v, float* o, float* lse) {
    attention::cpu::forward(q, k, v, a.shape(), o, lse);
    return true;
  }
  static bool backward(const Args& a, const float* q, const float* k, const float* v, const float* o, const float* lse,
                       const float* dout, float* dq, float* dk, float* dv) {
    attention::cpu::backward(q, k, v, o, lse, dout, a.shape(), dq, dk, dv);
    return true;
  }
};

// The naive baseline, linked in through its exported C functions.
struct Naive {
  static bool forward(const Args& a, const float* q, const float* k, const float* v, float* o, float* lse) {
    return attention_forward(q, k, v, a.batch, a.heads_q, a.heads_kv, a.n_q, a.n_kv, a.dim, a.scale(), a.causal, o, lse,
                             nullptr) == HARNESS_STATUS_OK;
  }
  static bool backward(const Args& a, const float* q, const float* k, const float* v, const float* o, const float* lse,
                       const float* dout, float* dq, float* dk, float* dv) {
    return attention_backward(q, k, v, o, lse, dout, a.batch, a.heads_q, a.heads_kv, a.n_q, a.n_kv, a.dim, a.scale(),
                              a.causal, dq, dk, dv, nullptr) == HARNESS_STATUS_OK;
  }
};

// One input set of N(0, 1) elements, with o and lse from a forward of Impl.
template <class Impl>
struct Problem {
  Args args;
  std::vector<float> q, k, v, dout, o, lse, dq, dk, dv;
  bool ok = true;

  explicit Problem(const benchmark::State& state)
      : args{state.range(0), state.range(1), state.range(2),     state.range(3),
             state.range(4), state.range(5), state.range(6) != 0} {
    const size_t q_size = static_cast<size_t>(args.batch * args.heads_q * args.n_q * args.dim);
    const size_t kv_size = static_cast<size_t>(args.batch * args.heads_kv * args.n_kv * args.dim);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto fill = [&](std::vector<float>& x, size_t n) {
      x.resize(n);
      for (float& e : x) e = normal(rng);
    };
    fill(q, q_size);
    fill(k, kv_size);
    fill(v, kv_size);
    fill(dout, q_size);
    o.resize(q_size);
    lse.resize(static_cast<size_t>(args.batch * args.heads_q * args.n_q));
    dq.resize(q_size);
    dk.resize(kv_size);
    dv.resize(kv_size);
    ok = Impl::forward(args, q.data(), k.data(), v.data(), o.data(), lse.data());
  }

  double flops() const {
    return attention_forward_flops(args.batch, args.heads_q, args.n_q, args.n_kv, args.dim, args.causal);
  }
};

// Times `call(p)` (false: failed) and reports the FLOP rate of `flop_factor`
// times the forward's FLOPs per call.
template <class Impl, class Call>
void time_calls(benchmark::State& state, double flop_factor, Call call) {
  Problem<Impl> p(state);
  if (!p.ok) {
    state.SkipWithError(attention_last_error());
    return;
  }
  for (auto _ : state) {
    if (!call(p)) {
      state.SkipWithError(attention_last_error());
      break;
    }
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] = benchmark::Counter(flop_factor * p.flops() * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

template <class Impl>
void BM_AttentionForward(benchmark::State& state) {
  time_calls<Impl>(state, 1.0, [](Problem<Impl>& p) {
    return Impl::forward(p.args, p.q.data(), p.k.data(), p.v.data(), p.o.data(), p.lse.data());
  });
}

template <class Impl>
void BM_AttentionBackward(benchmark::State& state) {
  time_calls<Impl>(state, 2.5, [](Problem<Impl>& p) {
    return Impl::backward(p.args, p.q.data(), p.k.data(), p.v.data(), p.o.data(), p.lse.data(), p.dout.data(),
                          p.dq.data(), p.dk.data(), p.dv.data());
  });
}

// {batch, heads_q, heads_kv, n_q, n_kv, dim, causal}: the challenge's CPU
// perf shapes (prefill, long, gqa), a longer causal one, and one tile of
// queries against many keys (the forward shares its keys among threads).
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "heads_q", "heads_kv", "n_q", "n_kv", "dim", "causal"});
  b->Args({1, 4, 4, 512, 512, 64, 1});
  b->Args({1, 1, 1, 256, 8192, 64, 0});
  b->Args({1, 8, 2, 512, 512, 128, 1});
  b->Args({1, 8, 8, 1024, 1024, 64, 1});
  b->Args({1, 1, 1, 64, 16384, 64, 0});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

// The smoke test (bench_attention_cpu_smoke) runs the fast backward on one
// shape, a few iterations, only to prove the benchmark runs:
// smoke-filter: BM_AttentionBackward<Fast>/batch:1/heads_q:4/heads_kv:4/n_q:512/n_kv:512/dim:64/causal:1
BENCHMARK_TEMPLATE(BM_AttentionForward, Fast)->Apply(shapes);
BENCHMARK_TEMPLATE(BM_AttentionBackward, Fast)->Apply(shapes);
// The naive kernels take up to a second a call on these shapes: a few
// iterations suffice to tell them apart.
BENCHMARK_TEMPLATE(BM_AttentionForward, Naive)->Apply(shapes)->Iterations(3);
BENCHMARK_TEMPLATE(BM_AttentionBackward, Naive)->Apply(shapes)->Iterations(3);

BENCHMARK_MAIN();
