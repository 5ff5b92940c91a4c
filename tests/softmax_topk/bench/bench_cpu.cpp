// Google Benchmark: the fast CPU softmax_topk kernel against the naive CPU
// baseline (called through its C ABI, exactly as the harness loads it).
//
// Bytes processed follow the challenge's byte model, rows*V*4 + rows*K*8, so
// the bytes_per_second column is the effective bandwidth the harness reports.
// Each benchmark cycles through enough input sets to exceed the last-level
// cache, so no call is served from a cache warmed by the previous one.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "softmax_topk.h"
#include "softmax_topk/cpu/softmax_topk_cpu.h"

namespace {

// Inputs of one shape: enough copies to span >= 256 MiB (at least 2).
struct Inputs {
  int64_t rows, vocab, k;
  std::vector<std::vector<float>> logits;
  std::vector<float> probs;
  std::vector<int32_t> indices;

  Inputs(int64_t r, int64_t v, int64_t kk) : rows(r), vocab(v), k(kk) {
    const int64_t bytes = rows * vocab * 4;
    const int64_t copies = std::max<int64_t>(2, (int64_t{256} << 20) / bytes + 1);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    logits.resize(static_cast<size_t>(copies));
    for (auto& l : logits) {
      l.resize(static_cast<size_t>(rows * vocab));
      for (float& x : l) x = normal(rng);
    }
    probs.resize(static_cast<size_t>(rows * k));
    indices.resize(static_cast<size_t>(rows * k));
  }
};

void set_counters(benchmark::State& state, const Inputs& in) {
  state.SetBytesProcessed(state.iterations() * (in.rows * in.vocab * 4 + in.rows * in.k * 8));
  state.counters["rows"] = static_cast<double>(in.rows);
  state.counters["V"] = static_cast<double>(in.vocab);
  state.counters["K"] = static_cast<double>(in.k);
}

void BM_SoftmaxTopkFast(benchmark::State& state) {
  Inputs in(state.range(0), state.range(1), state.range(2));
  size_t next = 0;
  for (auto _ : state) {
    softmax_topk::cpu::softmax_topk(in.logits[next].data(), in.rows, in.vocab, in.k, in.probs.data(),
                                    in.indices.data());
    benchmark::DoNotOptimize(in.probs.data());
    benchmark::ClobberMemory();
    next = (next + 1) % in.logits.size();
  }
  set_counters(state, in);
}

void BM_SoftmaxTopkNaive(benchmark::State& state) {
  Inputs in(state.range(0), state.range(1), state.range(2));
  size_t next = 0;
  for (auto _ : state) {
    const harness_status status =
        softmax_topk_run(in.logits[next].data(), in.rows, in.vocab, in.k, in.probs.data(), in.indices.data(), nullptr);
    if (status != HARNESS_STATUS_OK) {
      state.SkipWithError(softmax_topk_last_error());
      break;
    }
    benchmark::DoNotOptimize(in.probs.data());
    benchmark::ClobberMemory();
    next = (next + 1) % in.logits.size();
  }
  set_counters(state, in);
}

// {rows, V, K}: the challenge's perf shapes.
void perf_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "V", "K"});
  for (int64_t k : {8, 64, 256}) b->Args({256, 131072, k});
  b->Args({1024, 32000, 64});
  b->Args({32768, 1024, 10});
  b->Args({64, 262144, 32});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

// The smoke test (bench_softmax_topk_cpu_smoke) runs the fast kernel on
// one shape, a few iterations, only to prove the benchmark runs:
// smoke-filter: BM_SoftmaxTopkFast/rows:256/V:131072/K:8/
BENCHMARK(BM_SoftmaxTopkFast)->Apply(perf_shapes);
// The naive kernel takes seconds on the largest shapes: a few iterations
// suffice to tell it apart.
BENCHMARK(BM_SoftmaxTopkNaive)->Apply(perf_shapes)->Iterations(2);

BENCHMARK_MAIN();
