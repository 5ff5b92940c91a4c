#include "kv_session.h"

#include <algorithm>
#include <cmath>

#include "harness/core/error.h"
#include "harness/core/parallel.h"
#include "harness/core/rng.h"
#include "harness/runner/stateless_driver.h"
#include "kv_cache.h"
#include "kv_cache/attention_reference.h"

namespace kv {

using harness::DType;
using harness::Verdict;
using harness::protocol::Access;

namespace {

// The score of a pointed query's token, about. The other scores spread
// with a standard deviation of kPointedScore / sqrt(head_dim) (3.8 at d 64,
// 2.7 at 128), so that 4096 tokens at 64, or 32768 at 128, weigh about
// e^-15 of the pointed one together. They must weigh that little: float32
// code summing them after the pointed token loses them to rounding (NumPy's
// float32 einsum, at a score of 16 where they weighed 0.2%, lost an eighth
// of that: 1.07 times the tolerance). A higher score raises the conditioning
// F through |q|, and the tolerance with it: at 30 the half-precision
// exploit's worst error is 1.12 to 1.25 times the tolerance over 40 draws
// of 16 queries (NumPy model of the unit test's cache), at 16 it was 1.3 to
// 1.4.
constexpr double kPointedScore = 30.0;
// Values of V a workload's pointed queries read at the end, at least (as
// whole query rows, at least one per live sequence): one row of 4 kv heads
// of 64 values kept in half precision is beyond the float32 tolerance at
// about 19 draws in 20 (of N(0, 1) values only those near the largest can
// be); 16 such rows, or 4 of 8 heads of 128, make a miss vanishingly rare.
constexpr int64_t kPointedValues = 4096;

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
    ctx_.fail(Verdict::error, fmt::format("kv_cache_format returned {}, not one of KV_CACHE_FORMAT_FP32/FP16/INT8", format_));
  }
  ctx_.metrics()["format"] = format_;
  last_op_ = "create";
  resident_before_create_ = ctx_.memory_baseline();
  ctx_.call("create", {{"layers", config_.layers}, {"query_heads", config_.q_heads}, {"kv_heads", config_.kv_heads},
                       {"head_dim", config_.head_dim}, {"max_sequences", config_.max_sequences},
                       {"max_tokens", config_.max_tokens}, {"memory_budget", config_.budget}},
            {});
  empty_bytes_ = check_bytes();
}

bool KvSession::append(int64_t sequence, int64_t n, bool may_refuse) {
  HARNESS_CHECK(tokens(sequence) + n <= config_.max_tokens, "workload bug: sequence {} would exceed max_tokens", sequence);
  harness::SharedTensor& k = pooled("k", n, config_.kv_heads);
  harness::SharedTensor& v = pooled("v", n, config_.kv_heads);
  const int64_t start = tokens(sequence);
  for (int32_t layer = 0; layer < config_.layers; ++layer) {
    ++step_;
    last_op_ = fmt::format("append of {} tokens to sequence {}, layer {}", n, sequence, layer);
    const uint64_t seed = harness::derive_seed(ctx_.input_seed(0), fmt::format("{}/{}/{}", sequence, layer, start));
    fill(k.as<float>(), n, config_.kv_heads, harness::derive_seed(seed, "k"), scores_scale_);
    fill(v.as<float>(), n, config_.kv_heads, harness::derive_seed(seed, "v"), 1.0);
    const std::vector<int32_t> tolerated = may_refuse ? std::vector<int32_t>{HARNESS_STATUS_OUT_OF_MEMORY} : std::vector<int32_t>{};
    const auto reply = ctx_.call("append", {{"layer", layer}, {"sequence", sequence}, {"n", n}},
                                 {{&k, Access::in}, {&v, Access::in}}, tolerated);
    if (reply.status == HARNESS_STATUS_OUT_OF_MEMORY) {
      if (layer > 0) {
        ctx_.fail(Verdict::error, fmt::format("{}: refused layer {} after accepting layers before it: a chunk is "
                                              "refused whole, at its first layer", where(), layer));
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
      for (auto* planes : {&stored.keys, &stored.values}) {
        for (auto& plane : *planes) plane.reserve(most);
      }
    }
    stored.keys[static_cast<size_t>(layer)].insert(stored.keys[static_cast<size_t>(layer)].end(), k.as<float>(),
                                                   k.as<float>() + k.elements());
    stored.values[static_cast<size_t>(layer)].insert(stored.values[static_cast<size_t>(layer)].end(), v.as<float>(),
                                                     v.as<float>() + v.elements());
  }
  return true;
}

nlohmann::json KvSession::attend_scalars(int32_t layer, const std::vector<Query>& batch) const {
  std::vector<int64_t> sequences;
  std::vector<int32_t> lengths;
  for (const Query& q : batch) {
    sequences.push_back(q.sequence);
    lengths.push_back(q.n);
  }
  return {{"layer", layer}, {"sequences", sequences}, {"query_lengths", lengths}};
}

// Any float32 attention rounds each score q . k / sqrt(d) by about eps32
// times its terms' size, at most |q| |k| / sqrt(d) (Cauchy-Schwarz), and a
// score error ds moves the output by at most 2 max|v| ds (the softmax's
// weights shift by w (ds - mean ds)). So sound float32 code is off by up to
// eps32 * 2 max|v| max(|q| |k|) / sqrt(d) from rounded scores alone: noise
// for N(0, 1) data, 1e-4 relative once scores spread over hundreds.
harness::Conditioning KvSession::attention_conditioning(int32_t layer, const std::vector<Query>& batch, const float* q,
                                                        size_t rows) const {
  const int64_t d = config_.head_dim;
  double k_norm = 0, v_max = 0, q_norm = 0;
  for (const Query& query : batch) {
    const Stored& s = live_.at(query.sequence);
    const auto& keys = s.keys[static_cast<size_t>(layer)];
    const auto& values = s.values[static_cast<size_t>(layer)];
    for (size_t start = 0; start + static_cast<size_t>(d) <= keys.size(); start += static_cast<size_t>(d)) {
      double squares = 0;
      for (int64_t i = 0; i < d; ++i) squares += static_cast<double>(keys[start + static_cast<size_t>(i)]) * keys[start + static_cast<size_t>(i)];
      k_norm = std::max(k_norm, std::sqrt(squares));
    }
    for (float v : values) v_max = std::max(v_max, std::fabs(static_cast<double>(v)));
  }
  const size_t heads = rows * static_cast<size_t>(config_.q_heads);
  for (size_t h = 0; h < heads; ++h) {
    double squares = 0;
    for (int64_t i = 0; i < d; ++i) squares += static_cast<double>(q[h * static_cast<size_t>(d) + static_cast<size_t>(i)]) * q[h * static_cast<size_t>(d) + static_cast<size_t>(i)];
    q_norm = std::max(q_norm, std::sqrt(squares));
  }
  return {2.0 * v_max * q_norm * k_norm / std::sqrt(static_cast<double>(d)), "2 max|v| * max|q| * max|k| / sqrt(d)"};
}

void KvSession::check_attention(int32_t layer, const std::vector<Query>& batch, const float* q, const float* out,
                                const std::string& what) {
  const int64_t row = static_cast<int64_t>(config_.q_heads) * config_.head_dim;
  std::vector<std::pair<size_t, int64_t>> rows;  // (batch entry, query index) per output row
  for (size_t b = 0; b < batch.size(); ++b) {
    for (int64_t i = 0; i < batch[b].n; ++i) rows.emplace_back(b, i);
  }
  std::vector<double> reference(rows.size() * static_cast<size_t>(row));
  harness::parallel_for(rows.size(), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const auto [b, i] = rows[r];
      const Stored& s = live_.at(batch[b].sequence);
      const auto& keys = s.keys[static_cast<size_t>(layer)];
      const int64_t tokens = static_cast<int64_t>(keys.size()) / (config_.kv_heads * config_.head_dim);
      reference::causal_attention_row(keys.data(), s.values[static_cast<size_t>(layer)].data(), tokens,
                                      q + static_cast<int64_t>(r) * row, batch[b].n, i, config_.q_heads,
                                      config_.kv_heads, config_.head_dim, reference.data() + r * static_cast<size_t>(row));
    }
  });
  const harness::Tolerance& tolerance = tolerances_.at(format_);
  const harness::Conditioning conditioning = attention_conditioning(layer, batch, q, rows.size());
  const harness::Comparison c =
      harness::compare_to_reference(out, reference.data(), reference.size(), tolerance, nullptr, &conditioning);
  nlohmann::json metrics;
  c.add_metrics(metrics, "attention");
  nlohmann::json kept{{"attention_max_scaled_error", metrics["attention_max_scaled_error"]},
                      {"attention_tolerance_used", metrics["attention_tolerance_used"]}};
  if (metrics.contains("precision_loss")) kept["precision_loss"] = metrics["precision_loss"];
  harness::merge_worst_metrics(ctx_.metrics(), kept);
  if (!c.ok()) {
    ctx_.fail(Verdict::wrong_answer,
              fmt::format("{}: {}", what, c.describe("out", {static_cast<int64_t>(rows.size()), config_.q_heads, config_.head_dim}, tolerance)));
  }
}

void KvSession::point_row(int32_t layer, int64_t sequence, int64_t visible, float* q) {
  const auto& keys = live_.at(sequence).keys[static_cast<size_t>(layer)];
  const int64_t d = config_.head_dim, group = config_.q_heads / config_.kv_heads;
  for (int32_t g = 0; g < config_.kv_heads; ++g) {
    const auto token = static_cast<int64_t>(ctx_.secret_index(static_cast<size_t>(visible)));
    const float* k = keys.data() + (token * config_.kv_heads + g) * d;
    double squares = 0;
    for (int64_t x = 0; x < d; ++x) squares += static_cast<double>(k[x]) * k[x];
    // Keys are N(0, scale^2), of length about scale * sqrt(d): a query of
    // length kPointedScore / scale along k scores about kPointedScore, and
    // one length for every query keeps the largest |q| in F at that. No
    // key is all zero; were one, its query would stay zero.
    const double c = squares > 0 ? kPointedScore / (scores_scale_ * std::sqrt(squares)) : 0.0;
    for (int64_t h = g * group; h < (g + 1) * group; ++h) {
      for (int64_t x = 0; x < d; ++x) q[h * d + x] = static_cast<float>(c * k[x]);
    }
  }
}

void KvSession::check_attend(int32_t layer, const std::vector<Query>& batch, harness::SharedTensor& q) {
  harness::SharedTensor& out = pooled("out", q.spec().shape[0], config_.q_heads);
  ctx_.call("attend", attend_scalars(layer, batch), {{&q, Access::in}, {&out, Access::out}});
  check_attention(layer, batch, q.as<float>(), out.as<float>(), where());
}

void KvSession::attend(int32_t layer, const std::vector<Query>& batch) {
  ++step_;
  int64_t total = 0;
  for (const Query& q : batch) total += q.n;
  last_op_ = fmt::format("attend of layer {}, {} sequence(s), {} queries", layer, batch.size(), total);
  harness::SharedTensor& q = pooled("q", total, config_.q_heads);
  fill(q.as<float>(), total, config_.q_heads, harness::derive_seed(ctx_.input_seed(0), fmt::format("q/{}", step_)), scores_scale_);
  check_attend(layer, batch, q);
}

void KvSession::attend_pointed() {
  const std::vector<int64_t> live = live_sequences();
  if (live.empty()) return;
  const int64_t wanted_rows = (kPointedValues + config_.kv_heads * config_.head_dim - 1) / (config_.kv_heads * config_.head_dim);
  const auto sequences = static_cast<int64_t>(live.size());
  const int64_t per_sequence = (wanted_rows + sequences - 1) / sequences;
  std::vector<Query> batch;
  int64_t rows = 0;
  for (int64_t s : live) {
    batch.push_back({s, static_cast<int32_t>(std::min(tokens(s), per_sequence))});
    rows += batch.back().n;
  }
  harness::SharedTensor& q = pooled("q", rows, config_.q_heads);
  const int64_t row = static_cast<int64_t>(config_.q_heads) * config_.head_dim;
  for (int32_t layer = 0; layer < config_.layers; ++layer) {
    ++step_;
    last_op_ = fmt::format("attend of layer {}, {} sequence(s), {} queries each pointed at one token", layer,
                           batch.size(), rows);
    float* next = q.as<float>();
    for (const Query& query : batch) {
      // The i-th of a sequence's n queries sees its first tokens - n + i + 1 tokens.
      for (int64_t i = 0; i < query.n; ++i, next += row) point_row(layer, query.sequence, tokens(query.sequence) - query.n + i + 1, next);
    }
    check_attend(layer, batch, q);
  }
}

void KvSession::attend_all_layers(const std::vector<Query>& batch) {
  for (int32_t layer = 0; layer < config_.layers; ++layer) attend(layer, batch);
}

void KvSession::attend_newest() {
  std::vector<Query> batch;
  for (int64_t s : live_sequences()) batch.push_back({s, 1});
  if (!batch.empty()) attend_all_layers(batch);
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
  if (bytes > config_.budget) {
    ctx_.fail(Verdict::wrong_answer, fmt::format("{}: {} bytes in use, over the budget of {}", where(), bytes, config_.budget));
  }
  if (static_cast<double>(bytes) < minimum) {
    ctx_.fail(Verdict::wrong_answer, fmt::format("{}: reports {} bytes in use while holding {} tokens, whose K and V "
                                                 "alone take {:.0f} bytes in its format", where(), bytes, tokens, minimum));
  }
  // What the worker really holds since before create, against the most the
  // cache has reported so far: blocks it freed may stay in its pool for
  // reuse, but storage never reported (reserved past the live tokens,
  // leaked while reported free) shows. The memory score takes the cache at
  // its word only up to what the witness allows.
  most_reported_ = std::max(most_reported_, bytes);
  metrics["most_bytes_in_use"] = most_reported_;
  const int64_t held = std::max(bytes, ctx_.witness_memory(where() + ", the most kv_cache_bytes_in_use reported so far",
                                                           most_reported_, resident_before_create_));
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
    ctx_.fail(Verdict::wrong_answer, fmt::format("{}: {} bytes still in use after every sequence was released; right "
                                                 "after create it was {} (a leak)", where(), bytes, empty_bytes_));
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
  // The cache itself is far beyond any cache: two sets of queries suffice
  // to change the inputs between calls, and each round of timed calls gets
  // queries never seen before (fresh_queries), so a cache that remembers
  // its answers, by address or by content, has nothing to replay. Before
  // that, some sequences of the round just timed are checked (sequences no
  // submission can foresee), so that a replay in any round fails, not only
  // one in the last.
  const size_t set_count = 2;
  std::vector<harness::SharedTensor*> qs, outs;
  std::vector<std::vector<harness::Binding>> sets;
  for (size_t s = 0; s < set_count; ++s) {
    qs.push_back(&ctx_.tensor(harness::TensorSpec{"q", DType::f32, {rows, config_.q_heads, config_.head_dim}}));
    outs.push_back(&ctx_.tensor(harness::TensorSpec{"out", DType::f32, {rows, config_.q_heads, config_.head_dim}}));
    sets.push_back({{qs.back(), Access::in}, {outs.back(), Access::out}});
  }
  int64_t round = 1;  // the round just timed
  const int64_t row = static_cast<int64_t>(config_.q_heads) * config_.head_dim;
  // Between rounds: some sequences of the round just timed checked, then new
  // queries, staged so that they appear only as the round's request goes
  // out (harness/runner/input_stage.h), from a seed no submission can
  // foresee (CaseContext::secret_seed).
  std::vector<float> next_q(static_cast<size_t>(rows * row));
  auto fresh_queries = [&](harness::InputStage& stage) {
    for (size_t s = 0; s < set_count; ++s) {
      for (size_t i = 0; i < harness::kSpotCheckedRows; ++i) {
        const size_t b = ctx_.secret_index(batch.size());
        check_attention(0, {batch[b]}, qs[s]->as<float>() + static_cast<int64_t>(b) * row,
                        outs[s]->as<float>() + static_cast<int64_t>(b) * row,
                        fmt::format("timed repetitions, round {}, input set {} of {}, sequence {} (a spot check between "
                                    "rounds)", round, s + 1, set_count, batch[b].sequence));
      }
      fill(next_q.data(), rows, config_.q_heads, ctx_.secret_seed(), scores_scale_);
      // About half the rows pointed at one token (point_row), which ones a
      // secret: a cache that reads long sequences in half precision fails
      // the checks on them, and cannot tell them from the others without
      // the scores it would have to compute first.
      for (int64_t b = 0; b < rows; ++b) {
        if (ctx_.secret_index(2) == 0) point_row(0, batch[static_cast<size_t>(b)].sequence, tokens(batch[static_cast<size_t>(b)].sequence), next_q.data() + b * row);
      }
      stage.stage(*qs[s], next_q.data());
    }
    ++round;
  };
  for (size_t s = 0; s < set_count; ++s) {
    fill(qs[s]->as<float>(), rows, config_.q_heads, harness::derive_seed(ctx_.input_seed(s), "decode-q/0"), scores_scale_);
  }
  ++step_;
  last_op_ = fmt::format("timed decode of {} sequences", rows);
  ctx_.time("attend", attend_scalars(0, batch), sets, fresh_queries);
  for (size_t s = 0; s < set_count; ++s) {
    check_attention(0, batch, qs[s]->as<float>(), outs[s]->as<float>(),
                    fmt::format("timed repetitions, input set {} of {}", s + 1, set_count));
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
