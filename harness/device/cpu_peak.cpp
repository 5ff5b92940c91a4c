// STREAM-style bandwidth of the host, on arrays far larger than the
// last-level cache, all cores, best of several repetitions: a copy (bytes
// read plus written, as STREAM's "Copy" counts them), a read-only sweep and
// a write-only fill. The three differ by machine: on some a core can only
// keep enough misses in flight to read about half what a copy moves, so a
// read-bound kernel must be judged against the read ceiling, not the copy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "harness/core/clock.h"
#include "harness/device/device_info.h"

namespace harness {

namespace {

template <typename Work>
double best_seconds(int repetitions, int threads, Work work) {
  double best = 1e30;
  for (int r = 0; r < repetitions; ++r) {
    std::vector<std::thread> pool;
    const int64_t start = monotonic_ns();
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
    best = std::min(best, static_cast<double>(monotonic_ns() - start) / 1e9);
  }
  return best;
}

}  // namespace

PeakBandwidth measure_cpu_peak(uint64_t last_level_cache_bytes, bool quick) {
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  // Each array at least 8x the last-level cache so nothing is served from it.
  const size_t minimum = quick ? (64u << 20) : (256u << 20);
  const size_t bytes = std::max<size_t>(minimum, 8 * last_level_cache_bytes);
  const size_t words = bytes / sizeof(uint64_t);
  std::vector<uint64_t> source(words), target(words);
  // Touch every page first (first-touch by the thread that will use it).
  const size_t chunk = (words + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  auto range = [&](int t) {
    const size_t begin = std::min(words, static_cast<size_t>(t) * chunk);
    return std::make_pair(begin, std::min(words, begin + chunk));
  };
  best_seconds(1, threads, [&](int t) {
    auto [b, e] = range(t);
    for (size_t i = b; i < e; ++i) source[i] = i * 0x9E3779B97F4A7C15ULL;
    std::memset(target.data() + b, 0, (e - b) * sizeof(uint64_t));
  });

  const int repetitions = quick ? 4 : 10;
  const double copy_s = best_seconds(repetitions, threads, [&](int t) {
    auto [b, e] = range(t);
    std::memcpy(target.data() + b, source.data() + b, (e - b) * sizeof(uint64_t));
  });

  std::vector<uint64_t> sinks(static_cast<size_t>(threads) * 8);  // one cache line per thread
  const double read_s = best_seconds(repetitions, threads, [&](int t) {
    auto [b, e] = range(t);
    // Four streams through the thread's range at once, so that a core keeps
    // more misses in flight than one stream's prefetcher would; integer xor
    // is associative, so the compiler may vectorise each.
    const size_t quarter = (e - b) / 4;
    const uint64_t* s0 = source.data() + b;
    const uint64_t* s1 = s0 + quarter;
    const uint64_t* s2 = s1 + quarter;
    const uint64_t* s3 = s2 + quarter;
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (size_t i = 0; i < quarter; ++i) {
      a0 ^= s0[i];
      a1 ^= s1[i];
      a2 ^= s2[i];
      a3 ^= s3[i];
    }
    for (size_t i = b + 4 * quarter; i < e; ++i) a0 ^= source[i];
    sinks[static_cast<size_t>(t) * 8] = a0 ^ a1 ^ a2 ^ a3;
  });

  const double write_s = best_seconds(repetitions, threads, [&](int t) {
    auto [b, e] = range(t);
    std::memset(target.data() + b, static_cast<int>(t + 1), (e - b) * sizeof(uint64_t));
  });

  PeakBandwidth peak;
  peak.method = "stream-copy (memcpy, all cores)";
  peak.copy_bytes_per_second = 2.0 * static_cast<double>(bytes) / copy_s;
  peak.read_bytes_per_second = static_cast<double>(bytes) / read_s;
  peak.write_bytes_per_second = static_cast<double>(bytes) / write_s;
  peak.buffer_bytes = static_cast<double>(bytes);
  peak.repetitions = repetitions;
  peak.threads = threads;
  peak.quick = quick;
  return peak;
}

}  // namespace harness
