// One cache under test, as a workload script sees it: append, attend,
// release and bytes_in_use, each a call into the submission followed by the
// checks. The session keeps its own copy of everything appended (the float64
// reference reads it) and the memory figures the scores use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/challenge_api/case_context.h"
#include "harness/core/error_metrics.h"
#include "kv_case.h"

namespace kv {

struct KvConfig {
  int32_t layers = 1;
  int32_t q_heads = 4;
  int32_t kv_heads = 4;
  int32_t head_dim = 64;
  int32_t max_sequences = 1;
  int64_t max_tokens = 1;
  int64_t budget = 0;  // bytes
};

// The newest n tokens of `sequence` as queries.
struct Query {
  int64_t sequence;
  int32_t n;
};

class KvSession {
 public:
  // `scores_scale` multiplies q and k (the large-scores workload).
  KvSession(harness::CaseContext& ctx, const KvCase& c, const KvConfig& config,
            const std::map<int32_t, harness::Tolerance>& tolerances, double scores_scale = 1.0);

  // Reads the format, creates the cache, records its empty size.
  void start();
  // Appends n new tokens to every layer of `sequence`, layer by layer.
  // Returns false when the cache refused (HARNESS_STATUS_OUT_OF_MEMORY) and
  // `may_refuse`; a refusal otherwise ends the case.
  bool append(int64_t sequence, int64_t n, bool may_refuse = false);
  // Attends `batch` in one layer, or in every layer, and checks the outputs.
  void attend(int32_t layer, const std::vector<Query>& batch);
  void attend_all_layers(const std::vector<Query>& batch);
  // The newest token of every live sequence, every layer.
  void attend_newest();
  // The newest positions of every live sequence as queries (enough rows to
  // read 4096 values of V), every layer, each query head aimed at one token it
  // sees, chosen in secret, so that the output is nearly that token's V (see
  // point_row): a format's rounding shows where random queries average it
  // away (README.md, "Workloads"). finish() runs it.
  void attend_pointed();
  void release(int64_t sequence);
  // Asks bytes_in_use and checks it (within the budget, at least the live
  // tokens' K and V in the cache's format); returns it.
  int64_t check_bytes();
  // Releases every sequence, checks that the memory is back where it
  // started (no leak), destroys the cache.
  void finish();
  // Perf: one decode step of every live sequence, timed, every output checked.
  void time_decode();

  int64_t tokens(int64_t sequence) const;
  int64_t live_tokens() const;
  std::vector<int64_t> live_sequences() const;
  const KvConfig& config() const { return config_; }
  double bytes_per_element() const;
  // K and V of the live tokens, all layers, in the cache's format.
  double minimum_bytes() const;

 private:
  struct Stored {
    std::vector<std::vector<float>> keys, values;  // per layer, [tokens, kv_heads, head_dim]
    // Per layer, the largest |k| of a key vector and the largest |v| element
    // so far, kept up at each append for the tolerance's conditioning (a
    // pass over a gigabyte of K and V at every check otherwise).
    std::vector<double> key_norm_max, value_abs_max;
    void append(size_t layer, const float* k, const float* v, size_t elements, int64_t head_dim);
  };
  harness::SharedTensor& pooled(const std::string& name, int64_t rows, int64_t heads);
  void fill(float* data, int64_t rows, int64_t heads, uint64_t seed, double scale) const;
  // Writes one query row (q_heads x head_dim) that aims every query head at
  // one of the first `visible` tokens of `sequence` in `layer`, a secret
  // choice per kv head: q along k, of a length that makes the score
  // q.k / sqrt(d) about kPointedScore.
  void point_row(int32_t layer, int64_t sequence, int64_t visible, float* q);
  // `secret_queries`: q came from a secret (CaseContext::secret_seed,
  // point_row), not from the printed seed. Such a check gives its verdict
  // but no precision_loss: the stability score must reproduce from the
  // printed command.
  void check_attend(int32_t layer, const std::vector<Query>& batch, harness::SharedTensor& q, bool secret_queries);
  nlohmann::json attend_scalars(int32_t layer, const std::vector<Query>& batch) const;
  // What rounded float32 scores alone can do to the output (see the .cpp).
  harness::Conditioning attention_conditioning(int32_t layer, const std::vector<Query>& batch, const float* q,
                                               size_t rows) const;
  void check_attention(int32_t layer, const std::vector<Query>& batch, const float* q, const float* out,
                       const std::string& what, bool secret_queries);
  std::string where() const;

  harness::CaseContext& ctx_;
  KvCase case_;
  KvConfig config_;
  std::map<int32_t, harness::Tolerance> tolerances_;
  double scores_scale_;
  int32_t format_ = 0;
  int64_t empty_bytes_ = 0;
  harness::CaseContext::MemoryBaseline resident_before_create_;  // the memory witnesses' baseline
  int64_t most_reported_ = 0;                                    // the largest bytes_in_use so far
  int64_t largest_scores_bytes_ = 0;                             // the largest attend's scores, padded, in double
  int64_t step_ = 0;
  std::string last_op_;
  std::map<int64_t, Stored> live_;
  std::map<std::string, harness::SharedTensor*> pool_;
};

}  // namespace kv
