// cuda-fast's paged KV cache, fp32 and fp16, run on the host by the warp
// emulator: sequences appended in prefills and single decode steps, one
// released and its blocks reused, attends over batches that mix a decode
// step with chunks of several queries, on an 8-multiprocessor device (so
// that the planner splits long rows and the merge kernel runs); each attend
// judged against the float64 causal attention of everything appended, with
// challenge.json's tolerance for the format and the challenge's F term
// (2 max|v| max|q| max|k| / sqrt(d), kv_session_attention.cpp). Under each
// of the emulator's schedules. cuda-fast passes every case on an H200; here
// its logic is tested on every machine.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "harness/core/error_metrics.h"
#include "kv_cache/attention_reference.h"
#include "kv_cache/cuda/paged_cache_cuda.cuh"
#include "warp_emulation/every_schedule.h"

namespace kvcache::emulated {
namespace {

using cuda::Format;
using cuda::PagedCache;
using cuda::Status;

harness::Tolerance configured_tolerance(Format format) {
  return harness::find_challenge("kv_cache").element_tolerances().at(format == Format::fp32 ? "fp32" : "fp16");
}

// What the harness keeps of each sequence: every key and value appended, per layer.
struct Appended {
  std::vector<std::vector<float>> keys, values;
};

class Session {
 public:
  Session(Format format, const cuda::CacheConfig& config) : format_(format), config_(config), rng_(20261128) {
    std::string why;
    EXPECT_EQ(PagedCache::create(config, format, &cache_, &why), Status::ok) << why;
  }

  int64_t row() const { return config_.kv_heads * config_.head_dim; }

  void append(int64_t sequence, int64_t n) {
    for (int32_t layer = 0; layer < config_.layers; ++layer) {
      std::vector<float> k(static_cast<size_t>(n * row())), v(k.size());
      for (float& x : k) x = normal_(rng_);
      for (float& x : v) x = normal_(rng_);
      std::string why;
      ASSERT_EQ(cache_->append(layer, sequence, n, k.data(), v.data(), nullptr, &why), Status::ok) << why;
      Appended& s = stored_[sequence];
      s.keys.resize(static_cast<size_t>(config_.layers));
      s.values.resize(static_cast<size_t>(config_.layers));
      s.keys[static_cast<size_t>(layer)].insert(s.keys[static_cast<size_t>(layer)].end(), k.begin(), k.end());
      s.values[static_cast<size_t>(layer)].insert(s.values[static_cast<size_t>(layer)].end(), v.begin(), v.end());
    }
  }

  void release(int64_t sequence) {
    EXPECT_TRUE(cache_->release(sequence));
    stored_.erase(sequence);
  }

  // One attend of `batch` (sequence, queries) on `layer`, checked.
  void attend(int32_t layer, const std::vector<std::pair<int64_t, int32_t>>& batch, const std::string& what) {
    const int64_t q_row = config_.query_heads * config_.head_dim;
    std::vector<int64_t> sequences;
    std::vector<int32_t> lengths;
    int64_t rows = 0;
    for (const auto& [sequence, n] : batch) {
      sequences.push_back(sequence);
      lengths.push_back(n);
      rows += n;
    }
    std::vector<float> q(static_cast<size_t>(rows * q_row)), out(q.size(), NAN);
    for (float& x : q) x = normal_(rng_);
    std::string why;
    ASSERT_EQ(cache_->attend(layer, static_cast<int32_t>(batch.size()), sequences.data(), lengths.data(), q.data(),
                             out.data(), nullptr, &why),
              Status::ok)
        << what << ": " << why << " " << warp_emulation::last_failure();

    std::vector<double> reference(out.size());
    double q_max = 0, k_max = 0, v_max = 0;
    int64_t at = 0;
    for (const auto& [sequence, n] : batch) {
      const Appended& s = stored_.at(sequence);
      const auto& keys = s.keys[static_cast<size_t>(layer)];
      const auto& values = s.values[static_cast<size_t>(layer)];
      reference::causal_attention(keys.data(), values.data(), static_cast<int64_t>(keys.size()) / row(),
                                  q.data() + at * q_row, n, static_cast<int>(config_.query_heads),
                                  static_cast<int>(config_.kv_heads), static_cast<int>(config_.head_dim),
                                  reference.data() + at * q_row);
      at += n;
      k_max = std::max(k_max, largest_norm(keys));
      v_max = std::max(v_max, max_abs(values));
    }
    q_max = largest_norm(q);
    const harness::Conditioning conditioning{2.0 * v_max * q_max * k_max / std::sqrt(double(config_.head_dim)),
                                             "2 max|v| * max|q| * max|k| / sqrt(d)"};
    const harness::Tolerance tolerance = configured_tolerance(format_);
    const harness::Comparison c =
        harness::compare_to_reference(out.data(), reference.data(), out.size(), tolerance, nullptr, &conditioning);
    EXPECT_TRUE(c.ok()) << what << ": " << c.describe("out", {rows, config_.query_heads, config_.head_dim}, tolerance);
  }

 private:
  // The largest norm of a head's row (of head_dim values).
  double largest_norm(const std::vector<float>& x) const {
    double most = 0;
    for (size_t i = 0; i < x.size(); i += static_cast<size_t>(config_.head_dim)) {
      double squares = 0;
      for (int64_t d = 0; d < config_.head_dim; ++d)
        squares += double(x[i + static_cast<size_t>(d)]) * x[i + static_cast<size_t>(d)];
      most = std::max(most, std::sqrt(squares));
    }
    return most;
  }
  static double max_abs(const std::vector<float>& x) {
    double most = 0;
    for (float v : x) most = std::max(most, double(std::fabs(v)));
    return most;
  }

  Format format_;
  cuda::CacheConfig config_;
  std::unique_ptr<PagedCache> cache_;
  std::map<int64_t, Appended> stored_;
  std::mt19937_64 rng_;
  std::normal_distribution<float> normal_;
};

// Prefills of 1, 9 and 300 tokens (a block is 8), decode steps, a release
// and a new sequence in its blocks; attends of decode steps alone, of a
// chunk of 5 queries beside them, and of one long row (split over the
// multiprocessors, then merged).
void run_workload(Format format, int64_t head_dim, int64_t query_heads, int64_t kv_heads) {
  const cuda::CacheConfig config{2, query_heads, kv_heads, head_dim, 4, 600, int64_t{64} << 20};
  Session s(format, config);
  s.append(0, 1);
  s.append(1, 9);
  s.append(2, 300);
  s.attend(0, {{0, 1}, {1, 1}, {2, 1}}, "a decode step of three sequences");
  s.append(0, 200);
  s.attend(1, {{0, 5}, {2, 1}}, "a chunk of 5 queries beside a decode step");
  for (int step = 0; step < 3; ++step) {
    s.append(2, 1);
    s.attend(0, {{2, 1}}, "decode step " + std::to_string(step) + " of the long sequence alone (split rows)");
  }
  s.release(1);
  s.append(3, 17);
  s.attend(1, {{3, 17}, {0, 1}}, "a new sequence in the released blocks, all its queries");
}

TEST(PagedCacheOnEmulator, Fp32AndFp16AttendsPassTheChallengesToleranceUnderEverySchedule) {
  warp_emulation::for_every_schedule([] {
    for (const Format format : {Format::fp32, Format::fp16}) {
      SCOPED_TRACE(format == Format::fp32 ? "fp32" : "fp16");
      run_workload(format, 64, 8, 2);
      run_workload(format, 128, 4, 4);
    }
  });
}

}  // namespace
}  // namespace kvcache::emulated
