// The case matrix of kv_cache (README.md, "Workloads").
#include <fmt/format.h>

#include "harness/core/error.h"
#include "kv_case.h"

namespace kv {

using harness::CaseSpec;
using harness::Suite;

namespace {

const std::pair<Workload, const char*> kNames[] = {{Workload::single, "single"},
                                                   {Workload::batch, "batch"},
                                                   {Workload::chunked_prefill, "chunked_prefill"},
                                                   {Workload::layers, "layers"},
                                                   {Workload::gqa, "gqa"},
                                                   {Workload::churn, "churn"},
                                                   {Workload::over_budget, "over_budget"},
                                                   {Workload::layered_budget, "layered_budget"},
                                                   {Workload::capacity, "capacity"},
                                                   {Workload::capacity_after_churn, "capacity_after_churn"},
                                                   {Workload::block_edges, "block_edges"},
                                                   {Workload::ragged_reuse, "ragged_reuse"},
                                                   {Workload::one_token, "one_token"},
                                                   {Workload::large_scores, "large_scores"},
                                                   {Workload::long_context, "long_context"},
                                                   {Workload::decode, "decode"}};

Workload workload_from_name(const std::string& name) {
  for (const auto& [w, text] : kNames) {
    if (name == text) return w;
  }
  HARNESS_FAIL("unknown kv_cache workload '{}'", name);
}

}  // namespace

std::string workload_name(Workload w) {
  for (const auto& [x, text] : kNames) {
    if (x == w) return text;
  }
  return "?";
}

harness::ByteModel decode_bytes(const KvCase& c, double attended_tokens, double rows, double bytes_per_element) {
  const double queries = rows * c.q_heads * c.head_dim * 4.0;
  return {attended_tokens * token_bytes(c, bytes_per_element) + queries, queries};
}

CaseSpec make_case_spec(Suite suite, const KvCase& c, bool quick) {
  CaseSpec spec;
  spec.suite = suite;
  const std::string shape = c.workload == Workload::decode ? fmt::format(".b{}.t{}", c.batch, c.tokens) : "";
  spec.id = fmt::format("{}.{}.l{}.h{}x{}.d{}{}", harness::suite_name(suite), workload_name(c.workload), c.layers,
                        c.q_heads, c.kv_heads, c.head_dim, shape);
  spec.params = {{"workload", workload_name(c.workload)},
                 {"layers", c.layers},
                 {"q_heads", c.q_heads},
                 {"kv_heads", c.kv_heads},
                 {"head_dim", c.head_dim}};
  if (c.workload == Workload::decode) {
    spec.params["batch"] = c.batch;
    spec.params["tokens"] = c.tokens;
    // fp32; the case sets it from the cache's format
    spec.bytes =
        decode_bytes(c, static_cast<double>(c.batch) * static_cast<double>(c.tokens), static_cast<double>(c.batch), 4);
  }
  spec.description = fmt::format("{} workload, {} layer(s), {} query / {} kv heads of {}", workload_name(c.workload),
                                 c.layers, c.q_heads, c.kv_heads, c.head_dim);
  spec.quick = quick;
  return spec;
}

KvCase kv_case_of(const CaseSpec& spec) {
  KvCase c;
  c.workload = workload_from_name(spec.params.at("workload").get<std::string>());
  c.layers = spec.params.at("layers").get<int32_t>();
  c.q_heads = spec.params.at("q_heads").get<int32_t>();
  c.kv_heads = spec.params.at("kv_heads").get<int32_t>();
  c.head_dim = spec.params.at("head_dim").get<int32_t>();
  c.batch = spec.params.value("batch", 0);
  c.tokens = spec.params.value("tokens", int64_t{0});
  return c;
}

std::vector<CaseSpec> case_matrix() {
  std::vector<CaseSpec> cases;
  auto add = [&](Suite suite, Workload w, int32_t layers, int32_t hq, int32_t hkv, int32_t d, bool quick = false,
                 int32_t batch = 0, int64_t tokens = 0) {
    cases.push_back(make_case_spec(suite, KvCase{w, layers, hq, hkv, d, batch, tokens}, quick));
  };
  // Core: the shapes of decoding, GQA ratios 1, 4 and 8, head sizes 64 and 128.
  add(Suite::correctness, Workload::single, 1, 4, 4, 64, true);
  add(Suite::correctness, Workload::batch, 2, 8, 8, 64, true);
  add(Suite::correctness, Workload::chunked_prefill, 1, 4, 4, 128, true);
  add(Suite::correctness, Workload::layers, 4, 4, 4, 64);
  add(Suite::correctness, Workload::gqa, 2, 32, 8, 128, true);
  add(Suite::correctness, Workload::gqa, 1, 8, 1, 64);
  // Edge: the life of a cache under memory pressure, and awkward lengths.
  add(Suite::edge, Workload::churn, 2, 4, 4, 64, true);
  add(Suite::edge, Workload::over_budget, 1, 4, 4, 64, true);
  add(Suite::edge, Workload::layered_budget, 2, 4, 4, 64);
  add(Suite::edge, Workload::capacity, 1, 4, 4, 64, true);
  add(Suite::edge, Workload::capacity_after_churn, 1, 4, 4, 64, true);
  add(Suite::edge, Workload::block_edges, 1, 4, 2, 64);
  add(Suite::edge, Workload::ragged_reuse, 2, 4, 2, 64);
  add(Suite::edge, Workload::one_token, 1, 4, 4, 64);
  // Stability: scores near exp's limit, and a long softmax.
  add(Suite::stability, Workload::large_scores, 2, 8, 8, 64, true);
  add(Suite::stability, Workload::long_context, 1, 32, 8, 128);
  // Performance: a decode step of a whole batch. 64 x 2048 tokens is a 1 GiB
  // fp32 cache, far beyond any L2; a larger batch would judge nothing more
  // and cost every CPU submission seconds to fill and check.
  add(Suite::perf, Workload::decode, 1, 32, 8, 128, false, 64, 2048);
  add(Suite::perf, Workload::decode, 1, 32, 8, 128, true, 16, 4096);
  return cases;
}

}  // namespace kv
