// Google Benchmark: the fast CPU layernorm kernels against the naive CPU
// baseline (called through its C ABI, exactly as the harness loads it),
// forward and backward separately.
//
// Bytes processed follow the challenge's byte models, so bytes_per_second is
// the effective bandwidth the harness reports:
//   forward  8 * rows * dim + 8 * dim + 8 * rows
//   backward 12 * rows * dim + 12 * dim + 8 * rows
// Each benchmark cycles through enough input sets to exceed the last-level
// cache, so no call is served from a cache warmed by the previous one.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "layernorm_backward.h"
#include "layernorm_backward/cpu/layernorm_cpu.h"

namespace {

// The project's fast kernels.
struct Fast {
  static int64_t saved_bytes(int64_t rows, int64_t /*dim*/) { return layernorm::saved_state_bytes(rows); }
  static bool forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float* y,
                      void* saved) {
    layernorm::cpu::forward(x, gamma, beta, rows, dim, 1e-5f, y, static_cast<layernorm::RowStats*>(saved));
    return true;
  }
  static bool backward(const float* dy, const float* x, const float* gamma, const void* saved, int64_t rows,
                       int64_t dim, float* dx, float* dgamma, float* dbeta) {
    layernorm::cpu::backward(dy, x, gamma, static_cast<const layernorm::RowStats*>(saved), rows, dim, dx, dgamma,
                             dbeta);
    return true;
  }
};

// The naive baseline, linked in through its exported C functions.
struct Naive {
  static int64_t saved_bytes(int64_t rows, int64_t dim) {
    int64_t bytes = 0;
    return layernorm_saved_state_bytes(rows, dim, &bytes) == HARNESS_STATUS_OK ? bytes : -1;
  }
  static bool forward(const float* x, const float* gamma, const float* beta, int64_t rows, int64_t dim, float* y,
                      void* saved) {
    return layernorm_forward(x, gamma, beta, rows, dim, 1e-5f, y, saved, nullptr) == HARNESS_STATUS_OK;
  }
  static bool backward(const float* dy, const float* x, const float* gamma, const void* saved, int64_t rows,
                       int64_t dim, float* dx, float* dgamma, float* dbeta) {
    return layernorm_backward(dy, x, gamma, saved, rows, dim, 1e-5f, dx, dgamma, dbeta, nullptr) == HARNESS_STATUS_OK;
  }
};

// Input sets of one shape (x and dy each), enough to span >= 256 MiB (at
// least 2), with each set's saved state filled by a forward of Impl.
template <class Impl>
struct Problem {
  int64_t rows, dim;
  std::vector<std::vector<float>> x, dy;
  std::vector<std::vector<unsigned char>> saved;
  std::vector<float> gamma, beta, out, dgamma, dbeta;
  bool ok = true;

  Problem(int64_t r, int64_t d) : rows(r), dim(d) {
    const int64_t set_bytes = rows * dim * 8;
    const size_t sets = static_cast<size_t>(std::max<int64_t>(2, (int64_t{256} << 20) / set_bytes + 1));
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto fill = [&](std::vector<float>& v, size_t n, float mean, float scale) {
      v.resize(n);
      for (float& e : v) e = mean + scale * normal(rng);
    };
    const size_t n = static_cast<size_t>(rows * dim);
    fill(gamma, static_cast<size_t>(dim), 1.0f, 0.1f);
    fill(beta, static_cast<size_t>(dim), 0.0f, 0.1f);
    x.resize(sets);
    dy.resize(sets);
    saved.resize(sets);
    out.resize(n);
    dgamma.resize(static_cast<size_t>(dim));
    dbeta.resize(static_cast<size_t>(dim));
    const int64_t saved_bytes = Impl::saved_bytes(rows, dim);
    ok = saved_bytes >= 0;
    for (size_t s = 0; s < sets && ok; ++s) {
      fill(x[s], n, 0.0f, 1.0f);
      fill(dy[s], n, 0.0f, 1.0f);
      saved[s].resize(static_cast<size_t>(saved_bytes));
      ok = Impl::forward(x[s].data(), gamma.data(), beta.data(), rows, dim, out.data(), saved[s].data());
    }
  }
};

void set_counters(benchmark::State& state, int64_t rows, int64_t dim, int64_t per_element, int64_t per_column) {
  state.SetBytesProcessed(state.iterations() * (per_element * rows * dim + per_column * dim + 8 * rows));
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["dim"] = static_cast<double>(dim);
}

// Times `call(p, set)` (false: failed) over the rotating input sets, then
// counts bytes by the byte model: per_element * rows * dim + per_column * dim
// + the saved state.
template <class Impl, class Call>
void time_calls(benchmark::State& state, int64_t per_element, int64_t per_column, Call call) {
  Problem<Impl> p(state.range(0), state.range(1));
  if (!p.ok) {
    state.SkipWithError("setup failed");
    return;
  }
  size_t next = 0;
  for (auto _ : state) {
    if (!call(p, next)) {
      state.SkipWithError(layernorm_last_error());
      break;
    }
    benchmark::DoNotOptimize(p.out.data());
    benchmark::ClobberMemory();
    next = (next + 1) % p.x.size();
  }
  set_counters(state, p.rows, p.dim, per_element, per_column);
}

template <class Impl>
void BM_LayernormForward(benchmark::State& state) {
  time_calls<Impl>(state, 8, 8, [](Problem<Impl>& p, size_t set) {
    return Impl::forward(p.x[set].data(), p.gamma.data(), p.beta.data(), p.rows, p.dim, p.out.data(),
                         p.saved[set].data());
  });
}

template <class Impl>
void BM_LayernormBackward(benchmark::State& state) {
  time_calls<Impl>(state, 12, 12, [](Problem<Impl>& p, size_t set) {
    return Impl::backward(p.dy[set].data(), p.x[set].data(), p.gamma.data(), p.saved[set].data(), p.rows, p.dim,
                          p.out.data(), p.dgamma.data(), p.dbeta.data());
  });
}

// {rows, dim}: the challenge's perf shapes.
void perf_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "dim"});
  b->Args({4096, 16384});
  b->Args({32768, 1024});
  b->Args({8192, 4096});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

// The smoke test (bench_layernorm_backward_cpu_smoke) runs the fast
// backward on one shape, a few iterations, only to prove the benchmark runs:
// smoke-filter: BM_LayernormBackward<Fast>/rows:32768/dim:1024
BENCHMARK_TEMPLATE(BM_LayernormForward, Fast)->Apply(perf_shapes);
BENCHMARK_TEMPLATE(BM_LayernormBackward, Fast)->Apply(perf_shapes);
// The naive kernels take a good part of a second on these shapes: a few
// iterations suffice to tell them apart.
BENCHMARK_TEMPLATE(BM_LayernormForward, Naive)->Apply(perf_shapes)->Iterations(3);
BENCHMARK_TEMPLATE(BM_LayernormBackward, Naive)->Apply(perf_shapes)->Iterations(3);

BENCHMARK_MAIN();
