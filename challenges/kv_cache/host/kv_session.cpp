// KvSession: the ops of a cache under test (create, append, release,
// bytes_in_use, the timed decode) and the checks of its bytes and memory;
// attend and the judging of its outputs are in kv_session_attention.cpp.
#include "kv_session.h"

#include <algorithm>
#include <cmath>

#include "harness/core/error.h"
#include "harness/core/parallel.h"
#include "harness/core/rng.h"
#include "kv_cache.h"

namespace kv {

using harness::DType;
using harness::Verdict;

namespace {

int64_t integer_result(const harness::protocol::CallReply& reply, const char* name, harness::CaseContext& ctx,
                       const std::string& op) {
  if (!reply.scalars.contains(name) || !reply.scalars[name].is_number_integer()) {
    ctx.fail(Verdict::error, fmt::format("{} reported no integer '{}'", op, name));
  }
  return reply.scalars[name].get<int64_t>();
}

}  // namespace

KvSession::KvSession(harness::CaseContext& ctx, const KvCase& c, const KvConfig& config,
                     const std::map<int32_t, harness::Tolerance>& tolerances, double scores_scale)
    : ctx_(ctx), case_(c), config_(config), tolerances_(tolerances), scores_scale_(scores_scale) {}

std::string KvSession::where() const { return fmt::format("step {} ({})", step_, last_op_); }

double KvSession::bytes_per_element() const {
  return format_ == KV_CACHE_FORMAT_FP16 ? 2.0 : format_ == KV_CACHE_FORMAT_INT8 ? 1.0 : 4.0;
}

harness::SharedTensor& KvSession::pooled(const std::string& name, int64_t rows, int64_t heads) {
  const std::string key = fmt::format("{}/{}/{}", name, rows, heads);
  auto it = pool_.find(key);
  if (it == pool_.end()) {
    harness::SharedTensor& t = ctx_.tensor(harness::TensorSpec{name, DType::f32, {rows, heads, config_.head_dim}});
    it = pool_.emplace(key, &t).first;
  }
  return *it->second;
}

// N(0, scale^2) values, one seed per row so that rows fill in parallel.
void KvSession::fill(float* data, int64_t rows, int64_t heads, uint64_t seed, double scale) const {
  const auto row = static_cast<size_t>(heads * config_.head_dim);
  harness::parallel_for(static_cast<size_t>(rows), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      harness::Rng rng(harness::derive_seed(seed, r));
      for (size_t j = 0; j < row; ++j) data[r * row + j] = static_cast<float>(rng.normal() * scale);
    }
  });
}

void KvSession::start() {
  last_op_ = "format";
  format_ = static_cast<int32_t>(integer_result(ctx_.call("format", {}, {}), "format", ctx_, "kv_cache_format"));
  if (!tolerances_.count(format_)) {
    ctx_.fail(Verdict::error,
              fmt::format("kv_cache_format returned {}, not one of KV_CACHE_FORMAT_FP32/FP16/INT8", format_));
  }
  ctx_.metrics()["format"] = format_;
  last_op_ = "create";
  resident_before_create_ = ctx_.memory_baseline();
  ctx_.call("create",
            {{"layers", config_.layers},
             {"query_heads", config_.q_heads},
             {"kv_heads", config_.kv_heads},
             {"head_dim", config_.head_dim},
             {"max_sequences", config_.max_sequences},
             {"max_tokens", config_.max_tokens},
             {"memory_budget", config_.budget}},
            {});
  empty_bytes_ = check_bytes();
}

bool KvSession::append(int64_t sequence, int64_t n, bool may_refuse) {
  HARNESS_CHECK(tokens(sequence) + n <= config_.max_tokens, "workload bug: sequence {} would exceed max_tokens",
                sequence);
  harness::SharedTensor& k = pooled("k", n, config_.kv_heads);
  harness::SharedTensor& v = pooled("v", n, config_.kv_heads);
  const int64_t start = tokens(sequence);
  for (int32_t layer = 0; layer < config_.layers; ++layer) {
    ++step_;
    last_op_ = fmt::format("append of {} tokens to sequence {}, layer {}", n, sequence, layer);
    const uint64_t seed = harness::derive_seed(ctx_.input_seed(0), fmt::format("{}/{}/{}", sequence, layer, start));
    fill(k.as<float>(), n, config_.kv_heads, harness::derive_seed(seed, "k"), scores_scale_);
    fill(v.as<float>(), n, config_.kv_heads, harness::derive_seed(seed, "v"), 1.0);
    const std::vector<int32_t> tolerated =
        may_refuse ? std::vector<int32_t>{HARNESS_STATUS_OUT_OF_MEMORY} : std::vector<int32_t>{};
    const auto reply = ctx_.call("append", {{"layer", layer}, {"sequence", sequence}, {"n", n}}, {&k, &v}, tolerated);
    if (reply.status == HARNESS_STATUS_OUT_OF_MEMORY) {
      if (layer > 0) {
        ctx_.fail(Verdict::error, fmt::format("{}: refused layer {} after accepting layers before it: a chunk is "
                                              "refused whole, at its first layer",
                                              where(), layer));
      }
      return false;
    }
    Stored& stored = live_[sequence];
    if (stored.keys.empty()) {
      // Room for the sequence's longest possible length at once: grown by
      // doubling, the copies of a gigabyte cache cost seconds per case.
      const auto most = static_cast<size_t>(config_.max_tokens * config_.kv_heads * config_.head_dim);
      stored.keys.resize(static_cast<size_t>(config_.layers));
      stored.values.resize(static_cast<size_t>(config_.layers));
      stored.key_norm_max.assign(static_cast<size_t>(config_.layers), 0.0);
      stored.value_abs_max.assign(static_cast<size_t>(config_.layers), 0.0);
      for (auto* planes : {&stored.keys, &stored.values}) {
        for (auto& plane : *planes) plane.reserve(most);
      }
    }
    stored.append(static_cast<size_t>(layer), k.as<float>(), v.as<float>(), k.elements(), config_.head_dim);
  }
  return true;
}

void KvSession::Stored::append(size_t layer, const float* k, const float* v, size_t elements, int64_t head_dim) {
  keys[layer].insert(keys[layer].end(), k, k + elements);
  values[layer].insert(values[layer].end(), v, v + elements);
  const auto d = static_cast<size_t>(head_dim);
  for (size_t start = 0; start + d <= elements; start += d) {
    double squares = 0;
    for (size_t i = 0; i < d; ++i) squares += static_cast<double>(k[start + i]) * k[start + i];
    key_norm_max[layer] = std::max(key_norm_max[layer], std::sqrt(squares));
  }
  for (size_t i = 0; i < elements; ++i) value_abs_max[layer] = std::max(value_abs_max[layer], std::fabs(double{v[i]}));
}

void KvSession::release(int64_t sequence) {
  ++step_;
  last_op_ = fmt::format("release of sequence {}", sequence);
  ctx_.call("release", {{"sequence", sequence}}, {});
  live_.erase(sequence);
}

double KvSession::minimum_bytes() const {
  double elements = 0;
  for (const auto& [id, s] : live_) {
    for (const auto& layer : s.keys) elements += 2.0 * static_cast<double>(layer.size());
  }
  return elements * bytes_per_element();
}

int64_t KvSession::check_bytes() {
  ++step_;
  const std::string op = last_op_;
  last_op_ = "bytes_in_use";
  const int64_t bytes = integer_result(ctx_.call("bytes_in_use", {}, {}), "bytes", ctx_, "kv_cache_bytes_in_use");
  const double minimum = minimum_bytes();
  const int64_t tokens = live_tokens();
  auto& metrics = ctx_.metrics();
  metrics["bytes_series"].push_back(bytes);
  metrics["live_tokens_series"].push_back(tokens);
  // False claims about memory are noted, not final: the workload goes on and
  // its answers are still checked (the case's verdict is the gravest found).
  if (bytes > config_.budget) {
    ctx_.note_failure(Verdict::wrong_answer,
                      fmt::format("{}: {} bytes in use, over the budget of {}", where(), bytes, config_.budget));
  }
  if (static_cast<double>(bytes) < minimum) {
    ctx_.note_failure(Verdict::wrong_answer,
                      fmt::format("{}: reports {} bytes in use while holding {} tokens, whose K and V "
                                  "alone take {:.0f} bytes in its format",
                                  where(), bytes, tokens, minimum));
  }
  // What the worker really holds since before create, against the most the
  // cache has reported so far: blocks it freed may stay in its pool for
  // reuse, but storage never reported (reserved past the live tokens,
  // leaked while reported free) shows. The memory score takes the cache at
  // its word only up to what the witness allows.
  most_reported_ = std::max(most_reported_, bytes);
  metrics["most_bytes_in_use"] = most_reported_;
  // On a GPU, memory is held from allocation on: a pool allocated up front,
  // which the contract lets a cache keep up to its budget without reporting
  // it, and the largest attend's scores (a sound attention's working
  // memory) are allowed beside the reports.
  const int64_t device_claimed = std::max(most_reported_, config_.budget) + largest_scores_bytes_;
  const int64_t held = std::max(bytes, ctx_.witness_memory(where() + ", the most kv_cache_bytes_in_use reported so far",
                                                           most_reported_, resident_before_create_, device_claimed));
  // Memory efficiency at the fullest moment of the workload.
  if (tokens > 0 && tokens >= metrics.value("peak_live_tokens", int64_t{0})) {
    metrics["peak_live_tokens"] = tokens;
    metrics["bytes_at_peak"] = bytes;
    metrics["minimum_bytes_at_peak"] = minimum;
    metrics["memory_overhead"] = static_cast<double>(held) / minimum;
  }
  last_op_ = op;
  return bytes;
}

void KvSession::finish() {
  attend_pointed();
  for (int64_t s : live_sequences()) release(s);
  const int64_t bytes = check_bytes();
  if (bytes != empty_bytes_) {
    ctx_.note_failure(Verdict::wrong_answer,
                      fmt::format("{}: {} bytes still in use after every sequence was released; right "
                                  "after create it was {} (a leak)",
                                  where(), bytes, empty_bytes_));
  }
  last_op_ = "destroy";
  ctx_.call("destroy", {}, {});
}

void KvSession::time_decode() {
  std::vector<Query> batch;
  for (int64_t s : live_sequences()) batch.push_back({s, 1});
  const auto rows = static_cast<int64_t>(batch.size());
  double attended = 0;
  for (const Query& q : batch) attended += static_cast<double>(tokens(q.sequence));
  ctx_.set_byte_model(decode_bytes(case_, attended, static_cast<double>(rows), bytes_per_element()));
  // The cache itself is far beyond any cache, so two sets of queries
  // suffice; each round of timed calls gets queries never seen before
  // (fresh_queries), after a spot check of the round just timed, so that a
  // replay in any round fails.
  const size_t set_count = 2;
  std::vector<harness::SharedTensor*> qs, outs;
  std::vector<std::vector<harness::SharedTensor*>> sets;
  for (size_t s = 0; s < set_count; ++s) {
    qs.push_back(&ctx_.tensor(harness::TensorSpec{"q", DType::f32, {rows, config_.q_heads, config_.head_dim}}));
    outs.push_back(&ctx_.tensor(harness::TensorSpec{"out", DType::f32, {rows, config_.q_heads, config_.head_dim}}));
    sets.push_back({qs.back(), outs.back()});
  }
  int64_t round = 1;  // the round just timed
  const int64_t row = static_cast<int64_t>(config_.q_heads) * config_.head_dim;
  // Between rounds: some sequences of the round just timed checked, then new
  // queries, staged so that they appear only as the round's request goes
  // out (harness/challenge_api/input_stage.h), from a seed no submission can
  // foresee (CaseContext::secret_seed).
  std::vector<float> next_q(static_cast<size_t>(rows * row));
  auto fresh_queries = [&](harness::InputStage& stage) {
    for (size_t s = 0; s < set_count; ++s) {
      for (size_t i = 0; i < harness::kSpotCheckedRows; ++i) {
        const size_t b = ctx_.secret_index(batch.size());
        check_attention(
            0, {batch[b]}, qs[s]->as<float>() + static_cast<int64_t>(b) * row,
            outs[s]->as<float>() + static_cast<int64_t>(b) * row,
            fmt::format("timed repetitions, round {}, input set {} of {}, sequence {} (a spot check between "
                        "rounds)",
                        round, s + 1, set_count, batch[b].sequence),
            round > 1);
      }
      fill(next_q.data(), rows, config_.q_heads, ctx_.secret_seed(), scores_scale_);
      // About half the rows pointed at one token (point_row), which ones a
      // secret: a cache that reads long sequences in half precision fails
      // the checks on them, and cannot tell them from the others without
      // the scores it would have to compute first.
      for (int64_t b = 0; b < rows; ++b) {
        if (ctx_.secret_index(2) == 0)
          point_row(0, batch[static_cast<size_t>(b)].sequence, tokens(batch[static_cast<size_t>(b)].sequence),
                    next_q.data() + b * row);
      }
      stage.stage(*qs[s], next_q.data());
    }
    ++round;
  };
  for (size_t s = 0; s < set_count; ++s) {
    fill(qs[s]->as<float>(), rows, config_.q_heads, harness::derive_seed(ctx_.input_seed(s), "decode-q/0"),
         scores_scale_);
  }
  ++step_;
  last_op_ = fmt::format("timed decode of {} sequences", rows);
  ctx_.time("attend", attend_scalars(0, batch), sets, fresh_queries);
  for (size_t s = 0; s < set_count; ++s) {
    check_attention(0, batch, qs[s]->as<float>(), outs[s]->as<float>(),
                    fmt::format("timed repetitions, input set {} of {}", s + 1, set_count), round > 1);
  }
}

int64_t KvSession::tokens(int64_t sequence) const {
  const auto it = live_.find(sequence);
  if (it == live_.end() || it->second.keys.empty()) return 0;
  return static_cast<int64_t>(it->second.keys.front().size()) / (config_.kv_heads * config_.head_dim);
}

int64_t KvSession::live_tokens() const {
  int64_t total = 0;
  for (const auto& [id, s] : live_) total += tokens(id);
  return total;
}

std::vector<int64_t> KvSession::live_sequences() const {
  std::vector<int64_t> ids;
  for (const auto& [id, s] : live_) ids.push_back(id);
  return ids;
}

}  // namespace kv
