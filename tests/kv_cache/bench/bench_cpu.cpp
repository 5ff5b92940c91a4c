// Google Benchmark: decode attention of the fast paged CPU cache
// (kernels/kv_cache/cpu) against the naive CPU baseline (called through its C
// ABI, exactly as the harness loads it), at the challenge's perf shapes.
//
// One layer, Hq 32, Hkv 8, d 128; `batch` sequences of `tokens` tokens each
// are appended before timing, then each iteration attends one query per
// sequence. Bytes processed follow the challenge's decode byte model:
// every attended token's K and V (2 * Hkv * d * 4 bytes) plus q and out
// (2 * batch * Hq * d * 4), so bytes_per_second is the effective bandwidth
// the harness reports. The K/V (2 GiB at batch 64) dwarf the last-level
// cache, and q rotates over 4 buffers so no call repeats the previous one.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kv_cache.h"
#include "kv_cache/cpu/paged_cache_cpu.h"

namespace {

constexpr int32_t kQueryHeads = 32, kKvHeads = 8, kHeadDim = 128;
constexpr int kQueryBuffers = 4;

// Values in [-1, 1): the distribution does not matter to the timing, and an
// xorshift fills 2 GiB in a fraction of the time a normal generator takes.
void fill(std::vector<float>& data, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& f : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    f = static_cast<float>(static_cast<int32_t>(x >> 32)) * (1.0f / 2147483648.0f);
  }
}

struct Decode {
  int32_t batch;
  int64_t tokens;
  kv_cache_config config;
  std::vector<float> kv;  // [tokens, Hkv, d]: what every sequence is filled with
  std::vector<std::vector<float>> q;
  std::vector<float> out;
  std::vector<int64_t> sequences;
  std::vector<int32_t> query_lengths;

  Decode(int32_t b, int64_t t) : batch(b), tokens(t) {
    config = kv_cache_config{1, kQueryHeads, kKvHeads, kHeadDim, b, t, int64_t{1} << 40};
    kv.resize(static_cast<size_t>(tokens * kKvHeads * kHeadDim));
    fill(kv, 1);
    q.resize(kQueryBuffers);
    for (int i = 0; i < kQueryBuffers; ++i) {
      q[static_cast<size_t>(i)].resize(static_cast<size_t>(batch) * kQueryHeads * kHeadDim);
      fill(q[static_cast<size_t>(i)], static_cast<uint64_t>(i) + 2);
    }
    out.resize(static_cast<size_t>(batch) * kQueryHeads * kHeadDim);
    for (int32_t s = 0; s < batch; ++s) sequences.push_back(1000003 + 7 * int64_t{s});
    query_lengths.assign(static_cast<size_t>(batch), 1);
  }

  void set_counters(benchmark::State& state) const {
    const int64_t kv_bytes = int64_t{batch} * tokens * 2 * kKvHeads * kHeadDim * 4;
    const int64_t q_out_bytes = int64_t{2} * batch * kQueryHeads * kHeadDim * 4;
    state.SetBytesProcessed(state.iterations() * (kv_bytes + q_out_bytes));
    state.counters["batch"] = batch;
    state.counters["tokens"] = static_cast<double>(tokens);
  }
};

void BM_DecodeFast(benchmark::State& state) {
  Decode d(static_cast<int32_t>(state.range(0)), state.range(1));
  const kvcache::cpu::CacheConfig c{1, kQueryHeads, kKvHeads, kHeadDim, d.batch, d.tokens, d.config.memory_budget};
  kvcache::cpu::PagedCache cache(c);
  std::string why;
  for (int64_t s : d.sequences)
    if (cache.append(0, s, d.tokens, d.kv.data(), d.kv.data(), &why) != kvcache::BlockTable::Status::ok) {
      state.SkipWithError(why.c_str());
      return;
    }
  size_t next = 0;
  for (auto _ : state) {
    if (!cache.attend(0, d.batch, d.sequences.data(), d.query_lengths.data(), d.q[next].data(), d.out.data(), &why)) {
      state.SkipWithError(why.c_str());
      break;
    }
    benchmark::DoNotOptimize(d.out.data());
    benchmark::ClobberMemory();
    next = (next + 1) % d.q.size();
  }
  d.set_counters(state);
}

void BM_DecodeNaive(benchmark::State& state) {
  Decode d(static_cast<int32_t>(state.range(0)), state.range(1));
  kv_cache* cache = nullptr;
  if (kv_cache_create(&d.config, &cache) != HARNESS_STATUS_OK) {
    state.SkipWithError(kv_cache_last_error());
    return;
  }
  std::unique_ptr<kv_cache, harness_status (*)(kv_cache*)> owner(cache, kv_cache_destroy);
  for (int64_t s : d.sequences)
    if (kv_cache_append(cache, 0, s, d.tokens, d.kv.data(), d.kv.data(), nullptr) != HARNESS_STATUS_OK) {
      state.SkipWithError(kv_cache_last_error());
      return;
    }
  size_t next = 0;
  for (auto _ : state) {
    if (kv_cache_attend(cache, 0, d.batch, d.sequences.data(), d.query_lengths.data(), d.q[next].data(), d.out.data(),
                        nullptr) != HARNESS_STATUS_OK) {
      state.SkipWithError(kv_cache_last_error());
      break;
    }
    benchmark::DoNotOptimize(d.out.data());
    benchmark::ClobberMemory();
    next = (next + 1) % d.q.size();
  }
  d.set_counters(state);
}

// {batch, tokens}: the challenge's decode perf shapes.
void perf_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "tokens"});
  b->Args({64, 4096});
  b->Args({16, 4096});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

// The smoke test (bench_kv_cache_cpu_smoke) runs the fast decode on one
// shape, a few iterations, only to prove the benchmark runs:
// smoke-filter: BM_DecodeFast/batch:16/
BENCHMARK(BM_DecodeFast)->Apply(perf_shapes);
// The naive loop takes about a second per call at batch 64: a few iterations
// tell it apart.
BENCHMARK(BM_DecodeNaive)->Apply(perf_shapes)->Iterations(3);

BENCHMARK_MAIN();
