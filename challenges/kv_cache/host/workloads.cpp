#include "workloads.h"

#include <fmt/format.h>

#include <algorithm>

#include "churn_plan.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kv_cache.h"
#include "kv_session.h"

namespace kv {

namespace {

// A budget that a cache reserving max_tokens for every sequence slot also
// fits in, so that only the budget workloads press on memory.
KvConfig roomy(const KvCase& c, int32_t max_sequences, int64_t max_tokens) {
  KvConfig config{c.layers, c.q_heads, c.kv_heads, c.head_dim, max_sequences, max_tokens, 0};
  const double reservation =
      static_cast<double>(max_sequences) * static_cast<double>(max_tokens) * c.layers * token_bytes(c, 4);
  config.budget = static_cast<int64_t>(reservation * 1.25) + (1 << 20);
  return config;
}

std::vector<Query> full_prefill(const KvSession& s) {
  std::vector<Query> batch;
  for (int64_t id : s.live_sequences()) batch.push_back({id, static_cast<int32_t>(s.tokens(id))});
  return batch;
}

// Sequences of `lengths` appended one after another, their prefills
// attended together, then `rounds` decode rounds over all of them.
void prefill_then_decode(KvSession& s, const std::vector<int64_t>& lengths, int rounds, bool attend_prefill = true) {
  for (size_t i = 0; i < lengths.size(); ++i) s.append(sequence_id(static_cast<int64_t>(i)), lengths[i]);
  s.check_bytes();
  if (attend_prefill) s.attend_all_layers(full_prefill(s));
  for (int r = 0; r < rounds; ++r) {
    for (int64_t id : s.live_sequences()) s.append(id, 1);
    s.attend_newest();
    s.check_bytes();
  }
}

// Every live sequence released, in an order drawn from `rng`.
void release_all_in_random_order(KvSession& s, harness::Rng& rng) {
  auto live = s.live_sequences();
  while (!live.empty()) {
    const size_t pick = rng.below(live.size());
    s.release(live[pick]);
    live.erase(live.begin() + static_cast<long>(pick));
  }
}

void churn(KvSession& s, harness::Rng& rng) {
  for (const ChurnStep& step : plan_churn(rng, s.config().max_sequences)) {
    switch (step.kind) {
      case ChurnStep::start: s.append(step.sequence, step.tokens); break;
      case ChurnStep::release: s.release(step.sequence); break;
      case ChurnStep::decode:
        for (int64_t id : s.live_sequences()) {
          if (s.tokens(id) < s.config().max_tokens) s.append(id, 1);
        }
        break;
    }
    s.attend_newest();
    s.check_bytes();
  }
}

// Appends sequences of 128 tokens until the cache refuses one, and returns
// the refused id. A cache that never refuses, or refuses the very first
// sequence (which every budget here holds), is wrong: the workload cannot go
// on without both a refusal and a live sequence.
int64_t fill_until_refused(KvSession& s, harness::CaseContext& ctx) {
  int64_t refused = -1;
  for (int64_t i = 0; i < s.config().max_sequences; ++i) {
    if (!s.append(sequence_id(i), 128, true)) {
      refused = sequence_id(i);
      break;
    }
  }
  s.check_bytes();
  if (refused < 0)
    ctx.fail(harness::Verdict::wrong_answer, "the cache accepted more than its budget can hold without refusing");
  if (s.live_sequences().empty()) {
    ctx.fail(harness::Verdict::wrong_answer, "the cache refused the first sequence, which its budget holds");
  }
  return refused;
}

// Sequences of 128 tokens until the cache refuses one; the rest must stay
// intact; after a release the refused append must go through.
void over_budget(KvSession& s, harness::CaseContext& ctx) {
  const int64_t refused = fill_until_refused(s, ctx);
  s.attend_newest();
  // Grow the newest sequence by chunks until refused (or at max_tokens).
  const int64_t grower = s.live_sequences().back();
  while (s.tokens(grower) + 64 <= s.config().max_tokens && s.append(grower, 64, true)) {
  }
  s.check_bytes();
  s.attend_newest();
  s.release(s.live_sequences().front());
  s.append(refused, 128);
  s.check_bytes();
  s.attend_newest();
}

// Sequences of 128 tokens in a multi-layer cache whose budget (from
// layered_budget_tokens) holds three and a half of them: the fourth is
// refused whole, at its first layer, though one layer's share of it fits;
// the others stay intact; after a release it goes through. (max_tokens, 256,
// leaves room for one sequence even in a cache that reserves max_tokens per
// sequence.)
void layered_budget(KvSession& s, harness::CaseContext& ctx) {
  const int64_t refused = fill_until_refused(s, ctx);
  s.attend_newest();
  s.release(s.live_sequences().front());
  s.append(refused, 128);
  s.check_bytes();
  s.attend_newest();
}

// Three rounds of six sequences whose lengths end one before, at and one
// after a multiple of a block size drawn from the seed (8 to 128: every
// power-of-two block a paged cache is likely to use sees ragged ends over
// the rounds), prefilled and attended, decoded twice, then all released in
// a random order: each later round is served from released blocks holding
// the earlier round's K and V, which must never be read.
void ragged_reuse(KvSession& s, harness::Rng& rng) {
  int64_t next = 100;  // ids apart from the other workloads'
  for (int round = 0; round < 3; ++round) {
    const int64_t block = int64_t{8} << rng.below(5);
    for (int i = 0; i < 6; ++i) {
      const int64_t multiple = 1 + static_cast<int64_t>(rng.below(2));
      s.append(sequence_id(next++), multiple * block + (i % 3) - 1);
    }
    s.check_bytes();
    s.attend_all_layers(full_prefill(s));
    for (int step = 0; step < 2; ++step) {
      for (int64_t id : s.live_sequences()) s.append(id, 1);
      s.attend_newest();
    }
    s.check_bytes();
    release_all_in_random_order(s, rng);
  }
}

// The cache's bytes per element, asked before the session creates it, so
// that a budget can be sized to its format (an unknown format is the
// session's to reject).
double declared_bytes_per_element(harness::CaseContext& ctx) {
  const auto reply = ctx.call("format", {}, {});
  const nlohmann::json& format = reply.scalars.contains("format") ? reply.scalars["format"] : nlohmann::json();
  if (format == KV_CACHE_FORMAT_FP16) return 2.0;
  if (format == KV_CACHE_FORMAT_INT8) return 1.0;
  return 4.0;
}

// q and k of the large-score workload are N(0, scale^2), so scores have a
// standard deviation of scale^2, far past where exp overflows in the declared
// format without the max subtracted: 88.7 in float (fp32: 30, a deviation of
// 900), 11.1 in half (fp16: 4, a deviation of 16; at 900 fp16 K's own rounding
// would move outputs beyond the fp16 tolerance). int8 has no exp of its own;
// 2 keeps its rounding within its tolerance (README.md, "Workloads").
double large_scores_scale(double bytes_per_element) {
  if (bytes_per_element == 2.0) return 4.0;
  if (bytes_per_element == 1.0) return 2.0;
  return 30.0;
}

// Sequences of 100 tokens until refused: how many live tokens fit.
void capacity(KvSession& s, harness::CaseContext& ctx, const KvCase& c) {
  for (int64_t i = 0; i < s.config().max_sequences; ++i) {
    if (!s.append(sequence_id(i), 100, true)) break;
  }
  s.check_bytes();
  ctx.metrics()["capacity_tokens"] = s.live_tokens();
  ctx.metrics()["capacity_ideal_tokens"] = static_cast<double>(s.config().budget) / (c.layers * token_bytes(c, 4));
  s.attend_newest();
}

// Sequences of 128 tokens until the cache refuses one; returns how many
// tokens it then held, and releases them all.
int64_t fill_and_empty(KvSession& s) {
  for (int64_t i = 0; i < s.config().max_sequences; ++i) {
    if (!s.append(sequence_id(i), 128, true)) break;
  }
  s.check_bytes();
  const int64_t held = s.live_tokens();
  for (int64_t id : s.live_sequences()) s.release(id);
  s.check_bytes();
  return held;
}

// A cache that loses blocks as they are reused (a free list that drops a
// block it hands out a second time) holds what it counts and passes churn's
// leak check, but holds less and less: after 40 rounds of sequences coming
// and going it must accept as many tokens as when it was created. At every
// seed the rounds append at least 40 x 2 x 65 tokens, two and a half times
// what the budget holds, so every block is reused.
void capacity_after_churn(KvSession& s, harness::CaseContext& ctx, harness::Rng& rng) {
  const int64_t created = fill_and_empty(s);
  if (created == 0)
    ctx.fail(harness::Verdict::wrong_answer, "the cache refused the first sequence, which its budget holds");
  int64_t next = 1000;  // ids apart from the fills'
  for (int round = 0; round < 40; ++round) {
    const int starts = 2 + static_cast<int>(rng.below(3));
    for (int i = 0; i < starts; ++i) {
      const int64_t id = sequence_id(next++);
      const int64_t length = 64 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(s.config().max_tokens) - 68));
      if (!s.append(id, length, true) || !s.append(id, 1, true)) {
        ctx.fail(harness::Verdict::wrong_answer,
                 fmt::format("round {} of sequences coming and going: the cache refused an append with {} tokens "
                             "live, under a budget that held {} when it was created: it loses memory as it reuses it",
                             round + 1, s.live_tokens(), created));
      }
    }
    if (round % 8 == 7) s.attend_newest();
    s.check_bytes();
    release_all_in_random_order(s, rng);
  }
  s.check_bytes();
  const int64_t after = fill_and_empty(s);
  ctx.metrics()["capacity_after_churn_tokens"] = after;
  if (after < created) {
    ctx.fail(harness::Verdict::wrong_answer,
             fmt::format("after 40 rounds of sequences coming and going, the cache accepted {} tokens where it "
                         "accepted {} when it was created: it loses memory as it reuses it",
                         after, created));
  }
}

}  // namespace

void run_workload(harness::CaseContext& ctx, const KvCase& c, const FormatTolerances& tolerances) {
  harness::Rng rng(harness::derive_seed(ctx.input_seed(0), "script"));
  // Every workload is one session: created, scripted, then released and
  // checked for leaks by finish().
  auto in_session = [&](const KvConfig& config, auto script, double scores_scale = 1.0) {
    KvSession s(ctx, c, config, tolerances, scores_scale);
    s.start();
    script(s);
    s.finish();
  };
  switch (c.workload) {
    case Workload::single:
      return in_session(roomy(c, 1, 128), [&](KvSession& s) {
        s.append(sequence_id(0), 100);
        s.attend_all_layers(full_prefill(s));
        for (int step = 0; step < 20; ++step) {
          s.append(sequence_id(0), 1);
          s.attend_newest();
        }
        s.check_bytes();
      });
    case Workload::batch:
    case Workload::large_scores:
      return in_session(
          roomy(c, 8, 320),
          [&](KvSession& s) {
            prefill_then_decode(s, {1, 7, 16, 33, 64, 100, 255, 300}, 10);
          },
          c.workload == Workload::large_scores ? large_scores_scale(declared_bytes_per_element(ctx)) : 1.0);
    case Workload::chunked_prefill:
      return in_session(roomy(c, 1, 256), [&](KvSession& s) {
        for (int64_t chunk : {64, 64, 64, 37}) {
          s.append(sequence_id(0), chunk);
          s.attend_all_layers({{sequence_id(0), static_cast<int32_t>(chunk)}});
        }
        for (int step = 0; step < 16; ++step) {
          s.append(sequence_id(0), 1);
          s.attend_newest();
        }
        s.check_bytes();
      });
    case Workload::layers:
      return in_session(roomy(c, 3, 128), [&](KvSession& s) { prefill_then_decode(s, {50, 80, 120}, 8); });
    case Workload::gqa:
      return in_session(roomy(c, 4, 520), [&](KvSession& s) { prefill_then_decode(s, {100, 200, 37, 512}, 8); });
    case Workload::churn: return in_session(roomy(c, 16, 256), [&](KvSession& s) { churn(s, rng); });
    case Workload::over_budget: {
      // A budget that holds six sequences of 128 tokens in the declared
      // format (1.5 MiB at fp32), so that the seventh is refused below
      // max_sequences (8) whatever the format.
      const double budget = static_cast<double>(3 << 19) * declared_bytes_per_element(ctx) / 4.0;
      return in_session(KvConfig{c.layers, c.q_heads, c.kv_heads, c.head_dim, 8, 512, static_cast<int64_t>(budget)},
                        [&](KvSession& s) { over_budget(s, ctx); });
    }
    case Workload::layered_budget: {
      const double budget = layered_budget_tokens() * c.layers * token_bytes(c, declared_bytes_per_element(ctx));
      return in_session(KvConfig{c.layers, c.q_heads, c.kv_heads, c.head_dim, 8, 256, static_cast<int64_t>(budget)},
                        [&](KvSession& s) { layered_budget(s, ctx); });
    }
    case Workload::capacity:
      // A budget of 8 MiB.
      return in_session(KvConfig{c.layers, c.q_heads, c.kv_heads, c.head_dim, 64, 2048, 8 << 20},
                        [&](KvSession& s) { capacity(s, ctx, c); });
    case Workload::capacity_after_churn: {
      // A budget of 16 sequences of 128 tokens in the declared format.
      const double budget = 16 * 128 * c.layers * token_bytes(c, declared_bytes_per_element(ctx));
      return in_session(KvConfig{c.layers, c.q_heads, c.kv_heads, c.head_dim, 32, 256, static_cast<int64_t>(budget)},
                        [&](KvSession& s) { capacity_after_churn(s, ctx, rng); });
    }
    case Workload::block_edges:
      return in_session(roomy(c, 12, 136), [&](KvSession& s) {
        prefill_then_decode(s, {15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129}, 3);
      });
    case Workload::ragged_reuse:
      return in_session(roomy(c, 6, 2 * 128 + 1 + 2), [&](KvSession& s) { ragged_reuse(s, rng); });
    case Workload::one_token:
      return in_session(roomy(c, 1, 8), [&](KvSession& s) {
        s.append(sequence_id(0), 1);
        s.attend_all_layers({{sequence_id(0), 1}});
        s.check_bytes();
      });
    case Workload::long_context:
      return in_session(roomy(c, 1, 32768 + 4), [&](KvSession& s) {
        for (int chunk = 0; chunk < 8; ++chunk) s.append(sequence_id(0), 4096);
        s.check_bytes();
        // Decode steps only: a float64 check of 32768 prefill queries would
        // take longer than the rest of the suite.
        for (int step = 0; step < 4; ++step) {
          s.append(sequence_id(0), 1);
          s.attend_newest();
        }
      });
    case Workload::decode:
      return in_session(roomy(c, c.batch, c.tokens), [&](KvSession& s) {
        for (int32_t b = 0; b < c.batch; ++b) {
          for (int64_t done = 0; done < c.tokens; done += 1024)
            s.append(sequence_id(b), std::min<int64_t>(1024, c.tokens - done));
        }
        s.check_bytes();
        s.time_decode();
      });
  }
  HARNESS_FAIL("unhandled kv_cache workload {}", workload_name(c.workload));
}

}  // namespace kv
