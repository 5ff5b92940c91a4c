// The case matrix of softmax_topk (README.md, "Cases"). Core cases use
// normal logits; edge cases the shapes that break index arithmetic; the
// stability suite data that breaks float exp; perf cases are large enough
// that every input set is far beyond any cache.
#include <fmt/format.h>

#include <cmath>

#include "drawn_shapes.h"
#include "harness/core/error.h"
#include "topk_case.h"

namespace softmax_topk {

using harness::CaseSpec;
using harness::Suite;

namespace {

constexpr int64_t kStructuralVocab = 16 * 4096 + 32;

struct NamedData {
  Data data;
  const char* name;
};
const NamedData kDataNames[] = {{Data::normal, "normal"},
                                {Data::ties, "ties"},
                                {Data::equal, "equal"},
                                {Data::masked, "masked"},
                                {Data::offset, "offset"},
                                {Data::uniform, "uniform"},
                                {Data::dominant, "dominant"},
                                {Data::one_finite, "one_finite"},
                                {Data::dominant_late, "dominant_late"},
                                {Data::small_terms, "small_terms"},
                                {Data::cluster_warp, "cluster_warp"},
                                {Data::cluster_tile, "cluster_tile"},
                                {Data::cluster_end, "cluster_end"},
                                {Data::ascending, "ascending"},
                                {Data::descending, "descending"},
                                {Data::tile_ties, "tile_ties"},
                                {Data::masked_first_tile, "masked_first_tile"}};

std::string amount_label(const TopkCase& c) {
  switch (c.data) {
    case Data::masked: return fmt::format("{}", static_cast<int>(std::lround(c.amount * 100)));  // percent masked
    case Data::offset: return c.amount < 0 ? fmt::format("m{}", -c.amount) : fmt::format("p{}", c.amount);
    case Data::uniform:
    case Data::dominant:
    case Data::dominant_late:
    case Data::small_terms: return fmt::format("{}", c.amount);
    default: return "";
  }
}

}  // namespace

std::string data_name(Data data) {
  for (const auto& d : kDataNames) {
    if (d.data == data) return d.name;
  }
  return "?";
}

Data data_from_name(const std::string& name) {
  for (const auto& d : kDataNames) {
    if (name == d.name) return d.data;
  }
  HARNESS_FAIL("unknown softmax_topk data kind '{}'", name);
}

// Reads the logits once; writes k values and k indices per row.
harness::ByteModel byte_model(const TopkCase& c) {
  return {static_cast<double>(c.rows) * static_cast<double>(c.vocab) * 4.0,
          static_cast<double>(c.rows) * static_cast<double>(c.k) * 8.0};
}

CaseSpec make_case_spec(Suite suite, const TopkCase& c, bool quick) {
  CaseSpec spec;
  spec.suite = suite;
  spec.id = fmt::format("{}.{}{}.r{}.v{}.k{}", harness::suite_name(suite), data_name(c.data), amount_label(c), c.rows,
                        c.vocab, c.k);
  spec.params = {{"rows", c.rows}, {"vocab", c.vocab}, {"k", c.k}, {"data", data_name(c.data)}, {"amount", c.amount}};
  spec.description = fmt::format("{} rows x {} columns, top {}, {} logits", c.rows, c.vocab, c.k, data_name(c.data));
  spec.quick = quick;
  spec.bytes = byte_model(c);
  return spec;
}

TopkCase topk_case_of(const CaseSpec& spec, uint64_t shape_seed) {
  if (spec.params.contains("drawn")) {
    return draw_shape(drawn_from_name(spec.params["drawn"].get<std::string>()), shape_seed);
  }
  TopkCase c;
  c.rows = spec.params.at("rows").get<int64_t>();
  c.vocab = spec.params.at("vocab").get<int64_t>();
  c.k = spec.params.at("k").get<int64_t>();
  c.data = data_from_name(spec.params.at("data").get<std::string>());
  c.amount = spec.params.value("amount", 0.0);
  return c;
}

std::vector<CaseSpec> case_matrix() {
  std::vector<CaseSpec> cases;
  auto add = [&](Suite suite, int64_t rows, int64_t vocab, int64_t k, Data data = Data::normal, double amount = 0,
                 bool quick = false) {
    cases.push_back(make_case_spec(suite, TopkCase{rows, vocab, k, data, amount}, quick));
  };

  // Core: every K of the SPEC on a small, an LLM-sized and an odd vocabulary.
  for (int64_t k : {1, 2, 5, 10, 32, 64, 128, 256}) {
    const bool quick = k == 1 || k == 10 || k == 256;
    add(Suite::correctness, 64, 1024, k, Data::normal, 0, quick);
    add(Suite::correctness, 16, 32000, k);
    add(Suite::correctness, 8, 50257, k, Data::normal, 0, k == 64);
  }
  add(Suite::correctness, 4, 262144, 10, Data::normal, 0, true);
  add(Suite::correctness, 4, 262144, 256);
  add(Suite::correctness, 3, 131072, 64);
  add(Suite::correctness, 1024, 128, 5, Data::normal, 0, true);

  // Edge: degenerate and awkward shapes, ties, masks.
  add(Suite::edge, 1, 1, 1, Data::normal, 0, true);
  add(Suite::edge, 7, 1, 1);
  add(Suite::edge, 3, 5, 5, Data::normal, 0, true);
  add(Suite::edge, 2, 64, 64);
  add(Suite::edge, 2, 256, 256);
  add(Suite::edge, 5, 3, 2);
  add(Suite::edge, 9, 7, 5);
  add(Suite::edge, 11, 33, 32);
  add(Suite::edge, 6, 100, 10);
  add(Suite::edge, 13, 31, 10);
  add(Suite::edge, 10, 255, 128);
  add(Suite::edge, 17, 1001, 10, Data::normal, 0, true);
  add(Suite::edge, 4, 4099, 64);
  add(Suite::edge, 1, 32000, 64);
  add(Suite::edge, 65536, 32, 2);
  add(Suite::edge, 65537, 32, 2);  // one row past a grid dimension of 65536
  add(Suite::edge, 2, 4096, 512);
  add(Suite::edge, 2, 8192, 1024);
  add(Suite::edge, 32, 1000, 10, Data::ties, 0, true);
  add(Suite::edge, 8, 4096, 64, Data::ties);
  add(Suite::edge, 4, 50000, 256, Data::ties);
  add(Suite::edge, 8, 1000, 10, Data::equal);
  add(Suite::edge, 4, 4096, 256, Data::equal);
  add(Suite::edge, 16, 4096, 64, Data::masked, 0.90);
  add(Suite::edge, 8, 1000, 32, Data::masked, 0.99, true);
  // Structural: where the winners sit and how rows are ordered, drawn from
  // the seed within each structure (structural_data.cpp). 16 tiles and a
  // 32-column tail: the winners crowd one sixteenth of the row or less (the
  // tail alone for cluster_end), far from any spread a random row shows.
  add(Suite::edge, 8, kStructuralVocab, 32, Data::cluster_warp);
  add(Suite::edge, 8, kStructuralVocab, 64, Data::cluster_tile);
  add(Suite::edge, 8, kStructuralVocab, 16, Data::cluster_end);
  add(Suite::edge, 4, kStructuralVocab, 64, Data::ascending);
  add(Suite::edge, 4, kStructuralVocab, 64, Data::descending);
  add(Suite::edge, 8, 12388, 4, Data::tile_ties);
  add(Suite::edge, 8, 10000, 10, Data::masked_first_tile);

  // Edge, drawn: shapes around the boundaries kernels have, drawn from each
  // run's seed (drawn_shapes.h).
  for (Drawn kind : kDrawnKinds) {
    CaseSpec spec;
    spec.suite = Suite::edge;
    spec.id = "edge.drawn." + drawn_name(kind);
    spec.params = {{"drawn", drawn_name(kind)}, {"data", "normal"}};
    spec.description = fmt::format("a {} shape drawn from the run's seed, normal logits", drawn_name(kind));
    spec.quick = kind == Drawn::vocab_edges;
    cases.push_back(spec);
  }

  // Stability: data that breaks float exp without the max subtracted, and
  // probabilities spanning many orders of magnitude.
  add(Suite::stability, 16, 4096, 10, Data::offset, 85, true);
  add(Suite::stability, 8, 32000, 64, Data::offset, 85);
  add(Suite::stability, 16, 4096, 10, Data::offset, -100, true);
  add(Suite::stability, 32, 4096, 10, Data::uniform, 1e4);
  add(Suite::stability, 8, 32000, 64, Data::uniform, 1e4);
  add(Suite::stability, 16, 32000, 5, Data::dominant, 60);
  add(Suite::stability, 8, 4096, 64, Data::dominant, 100);
  add(Suite::stability, 4, 4096, 10, Data::one_finite);
  add(Suite::stability, 4, 10000, 10, Data::dominant_late, 100);
  add(Suite::stability, 2, 262144, 10, Data::small_terms, 17);

  // Performance: each input set well beyond any last-level cache.
  add(Suite::perf, 256, 131072, 8, Data::normal, 0, true);
  add(Suite::perf, 256, 131072, 64);
  add(Suite::perf, 256, 131072, 256);
  add(Suite::perf, 1024, 32000, 64);
  add(Suite::perf, 32768, 1024, 10);
  add(Suite::perf, 64, 262144, 32);
  return cases;
}

}  // namespace softmax_topk
