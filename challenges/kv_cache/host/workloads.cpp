#include "workloads.h"

#include <algorithm>

#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kv_session.h"

namespace kv {

namespace {

// Sequence ids are arbitrary int64 values, never small or contiguous.
int64_t sequence_id(int64_t i) { return 1000003 * (i + 1) + 7919 * (i % 13); }

// A budget that a cache reserving max_tokens for every sequence slot also
// fits in, so that only the budget workloads press on memory.
KvConfig roomy(const KvCase& c, int32_t max_sequences, int64_t max_tokens) {
  KvConfig config{c.layers, c.q_heads, c.kv_heads, c.head_dim, max_sequences, max_tokens, 0};
  const double reservation = static_cast<double>(max_sequences) * static_cast<double>(max_tokens) * c.layers * token_bytes(c, 4);
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

void churn(KvSession& s, harness::Rng& rng) {
  int64_t next = 0;
  for (int step = 0; step < 40; ++step) {
    const auto live = s.live_sequences();
    const double r = rng.uniform();
    if (live.size() < 3 || (r < 0.4 && live.size() < static_cast<size_t>(s.config().max_sequences))) {
      s.append(sequence_id(next++), 1 + static_cast<int64_t>(rng.below(200)));
    } else if (r < 0.7) {
      s.release(live[rng.below(live.size())]);
    } else {
      for (int64_t id : live) {
        if (s.tokens(id) < s.config().max_tokens) s.append(id, 1);
      }
    }
    s.attend_newest();
    s.check_bytes();
  }
}

// Sequences of 128 tokens until the cache refuses one; the rest must stay
// intact; after a release the refused append must go through.
void over_budget(KvSession& s, harness::CaseContext& ctx) {
  int64_t refused = -1;
  for (int64_t i = 0; i < s.config().max_sequences; ++i) {
    if (!s.append(sequence_id(i), 128, true)) {
      refused = sequence_id(i);
      break;
    }
  }
  s.check_bytes();
  if (refused < 0) ctx.fail(harness::Verdict::wrong_answer, "the cache accepted more than its budget can hold without refusing");
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

}  // namespace

void run_workload(harness::CaseContext& ctx, const KvCase& c, const FormatTolerances& tolerances) {
  harness::Rng rng(harness::derive_seed(ctx.input_seed(0), "script"));
  switch (c.workload) {
    case Workload::single: {
      KvSession s(ctx, c, roomy(c, 1, 128), tolerances);
      s.start();
      s.append(sequence_id(0), 100);
      s.attend_all_layers(full_prefill(s));
      for (int step = 0; step < 20; ++step) {
        s.append(sequence_id(0), 1);
        s.attend_newest();
      }
      s.check_bytes();
      s.finish();
      return;
    }
    case Workload::batch:
    case Workload::large_scores: {
      KvSession s(ctx, c, roomy(c, 8, 320), tolerances, c.workload == Workload::large_scores ? 30.0 : 1.0);
      s.start();
      prefill_then_decode(s, {1, 7, 16, 33, 64, 100, 255, 300}, 10);
      s.finish();
      return;
    }
    case Workload::chunked_prefill: {
      KvSession s(ctx, c, roomy(c, 1, 256), tolerances);
      s.start();
      for (int64_t chunk : {64, 64, 64, 37}) {
        s.append(sequence_id(0), chunk);
        s.attend_all_layers({{sequence_id(0), static_cast<int32_t>(chunk)}});
      }
      for (int step = 0; step < 16; ++step) {
        s.append(sequence_id(0), 1);
        s.attend_newest();
      }
      s.check_bytes();
      s.finish();
      return;
    }
    case Workload::layers: {
      KvSession s(ctx, c, roomy(c, 3, 128), tolerances);
      s.start();
      prefill_then_decode(s, {50, 80, 120}, 8);
      s.finish();
      return;
    }
    case Workload::gqa: {
      KvSession s(ctx, c, roomy(c, 4, 520), tolerances);
      s.start();
      prefill_then_decode(s, {100, 200, 37, 512}, 8);
      s.finish();
      return;
    }
    case Workload::churn: {
      KvSession s(ctx, c, roomy(c, 16, 256), tolerances);
      s.start();
      churn(s, rng);
      s.finish();
      return;
    }
    case Workload::over_budget: {
      KvConfig config{c.layers, c.q_heads, c.kv_heads, c.head_dim, 8, 512, 3 << 19};  // 1.5 MiB
      KvSession s(ctx, c, config, tolerances);
      s.start();
      over_budget(s, ctx);
      s.finish();
      return;
    }
    case Workload::capacity: {
      KvConfig config{c.layers, c.q_heads, c.kv_heads, c.head_dim, 64, 2048, 8 << 20};  // 8 MiB
      KvSession s(ctx, c, config, tolerances);
      s.start();
      capacity(s, ctx, c);
      s.finish();
      return;
    }
    case Workload::block_edges: {
      KvSession s(ctx, c, roomy(c, 12, 136), tolerances);
      s.start();
      prefill_then_decode(s, {15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129}, 3);
      s.finish();
      return;
    }
    case Workload::one_token: {
      KvSession s(ctx, c, roomy(c, 1, 8), tolerances);
      s.start();
      s.append(sequence_id(0), 1);
      s.attend_all_layers({{sequence_id(0), 1}});
      s.check_bytes();
      s.finish();
      return;
    }
    case Workload::long_context: {
      KvSession s(ctx, c, roomy(c, 1, 32768 + 4), tolerances);
      s.start();
      for (int chunk = 0; chunk < 8; ++chunk) s.append(sequence_id(0), 4096);
      s.check_bytes();
      // Decode steps only: a float64 check of 32768 prefill queries would
      // take longer than the rest of the suite.
      for (int step = 0; step < 4; ++step) {
        s.append(sequence_id(0), 1);
        s.attend_newest();
      }
      s.finish();
      return;
    }
    case Workload::decode: {
      KvSession s(ctx, c, roomy(c, c.batch, c.tokens), tolerances);
      s.start();
      for (int32_t b = 0; b < c.batch; ++b) {
        for (int64_t done = 0; done < c.tokens; done += 1024) s.append(sequence_id(b), std::min<int64_t>(1024, c.tokens - done));
      }
      s.check_bytes();
      s.time_decode();
      s.finish();
      return;
    }
  }
  HARNESS_FAIL("unhandled kv_cache workload {}", workload_name(c.workload));
}

}  // namespace kv
