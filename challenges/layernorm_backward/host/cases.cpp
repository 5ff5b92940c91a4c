// The case matrix of layernorm_backward (README.md, "Cases").
#include <fmt/format.h>

#include <cmath>

#include "drawn_shapes.h"
#include "harness/core/error.h"
#include "ln_case.h"

namespace layernorm {

using harness::CaseSpec;
using harness::Suite;

namespace {

const std::pair<Data, const char*> kDataNames[] = {
    {Data::normal, "normal"}, {Data::zero, "zero"}, {Data::constant, "constant"}, {Data::tiny, "tiny"},
    {Data::offset, "offset"}, {Data::huge, "huge"}, {Data::scaled, "scaled"}};

Data data_from_name(const std::string& name) {
  for (const auto& [data, text] : kDataNames) {
    if (name == text) return data;
  }
  HARNESS_FAIL("unknown layernorm data kind '{}'", name);
}

const char* ops_name(Ops ops) { return ops == Ops::forward ? "forward" : ops == Ops::backward ? "backward" : "both"; }

Ops ops_from_name(const std::string& name) {
  if (name == "forward") return Ops::forward;
  if (name == "backward") return Ops::backward;
  HARNESS_CHECK(name == "both", "unknown layernorm ops '{}'", name);
  return Ops::both;
}

}  // namespace

std::string data_name(Data data) {
  for (const auto& [d, text] : kDataNames) {
    if (d == data) return text;
  }
  return "?";
}

// Forward: reads x, gamma and beta; writes y and the saved mean and rstd.
harness::ByteModel forward_bytes(const LnCase& c) {
  const auto rows = static_cast<double>(c.rows), dim = static_cast<double>(c.dim);
  return {4 * rows * dim + 8 * dim, 4 * rows * dim + 8 * rows};
}

// Backward: reads dy, x, gamma and the saved mean and rstd; writes dx,
// dgamma and dbeta.
harness::ByteModel backward_bytes(const LnCase& c) {
  const auto rows = static_cast<double>(c.rows), dim = static_cast<double>(c.dim);
  return {8 * rows * dim + 4 * dim + 8 * rows, 4 * rows * dim + 8 * dim};
}

CaseSpec make_case_spec(Suite suite, const LnCase& c, bool quick) {
  CaseSpec spec;
  spec.suite = suite;
  const std::string amount =
      c.data == Data::offset ? fmt::format("1e{}", static_cast<int>(std::lround(std::log10(c.amount)))) : "";
  const std::string eps = c.eps == 1e-5f ? "" : fmt::format(".eps{:g}", c.eps);
  const std::string ops = c.ops == Ops::both ? "" : std::string(ops_name(c.ops)) + ".";
  spec.id = fmt::format("{}.{}{}{}.r{}.d{}{}", harness::suite_name(suite), ops, data_name(c.data), amount, c.rows,
                        c.dim, eps);
  spec.params = {
      {"rows", c.rows}, {"dim", c.dim}, {"data", data_name(c.data)}, {"eps", c.eps}, {"ops", ops_name(c.ops)}};
  // Only offset cases carry an offset: the report charts errors against it.
  if (c.data == Data::offset) spec.params["offset"] = c.amount;
  spec.description = fmt::format("{} rows x {} columns, {} x, eps {:g}{}", c.rows, c.dim, data_name(c.data), c.eps,
                                 c.ops == Ops::both ? "" : fmt::format(", {} timed", ops_name(c.ops)));
  spec.quick = quick;
  if (c.ops != Ops::both) spec.bytes = c.ops == Ops::backward ? backward_bytes(c) : forward_bytes(c);
  return spec;
}

LnCase ln_case_of(const CaseSpec& spec, uint64_t shape_seed) {
  if (spec.params.contains("drawn"))
    return draw_shape(drawn_from_name(spec.params["drawn"].get<std::string>()), shape_seed);
  LnCase c;
  c.rows = spec.params.at("rows").get<int64_t>();
  c.dim = spec.params.at("dim").get<int64_t>();
  c.data = data_from_name(spec.params.at("data").get<std::string>());
  c.amount = spec.params.value("offset", 0.0);
  c.eps = spec.params.value("eps", 1e-5f);
  c.ops = ops_from_name(spec.params.value("ops", "both"));
  return c;
}

std::vector<CaseSpec> case_matrix() {
  std::vector<CaseSpec> cases;
  auto add = [&](Suite suite, int64_t rows, int64_t dim, Data data = Data::normal, double amount = 0,
                 bool quick = false, float eps = 1e-5f, Ops ops = Ops::both) {
    cases.push_back(make_case_spec(suite, LnCase{rows, dim, data, amount, eps, ops}, quick));
  };
  // Core: the widths of the SPEC, from tiny to a transformer's, normal data.
  add(Suite::correctness, 2048, 64, Data::normal, 0, true);
  add(Suite::correctness, 512, 768, Data::normal, 0, true);
  add(Suite::correctness, 256, 1024);
  add(Suite::correctness, 64, 4096, Data::normal, 0, true);
  add(Suite::correctness, 32, 8192);
  add(Suite::correctness, 4, 65536);
  add(Suite::correctness, 333, 7, Data::normal, 0, true);
  add(Suite::correctness, 1000, 2);

  // Edge: degenerate widths and rows, zero variance, eps.
  add(Suite::edge, 100, 1, Data::normal, 0, true);
  add(Suite::edge, 3, 2);
  add(Suite::edge, 1, 4096);
  add(Suite::edge, 65536, 64);
  add(Suite::edge, 1, 65536);
  add(Suite::edge, 64, 1024, Data::zero, 0, true);
  add(Suite::edge, 64, 768, Data::constant, 0, true);
  add(Suite::edge, 64, 1024, Data::tiny);
  add(Suite::edge, 128, 256, Data::normal, 0, false, 1e-3f);
  add(Suite::edge, 1, 7);
  add(Suite::edge, 129, 1024);
  // Tails: a width that is no multiple of 8 (nor 64) above any vector width,
  // and a large row count that is no multiple of a row block (64 or 128).
  add(Suite::edge, 64, 1003);
  add(Suite::edge, 1100, 64);

  // Edge, drawn: shapes around row blocks above 4096 and 65536 rows and odd
  // widths, drawn from each run's seed (drawn_shapes.h).
  for (Drawn kind : kDrawnKinds) {
    CaseSpec spec;
    spec.suite = Suite::edge;
    spec.id = "edge.drawn." + drawn_name(kind);
    spec.params = {{"drawn", drawn_name(kind)}, {"data", "normal"}, {"ops", "both"}};
    spec.description = fmt::format("a {} shape drawn from the run's seed, normal x", drawn_name(kind));
    spec.quick = kind == Drawn::large_rows;
    cases.push_back(spec);
  }

  // Stability: the offset sweep (the report charts the error against it),
  // magnitudes whose squares overflow float, and a scaled input.
  for (int power = 0; power <= 6; ++power) {
    add(Suite::stability, 64, 1024, Data::offset, std::pow(10.0, power), power == 0 || power == 4 || power == 6);
  }
  add(Suite::stability, 64, 64, Data::huge);
  add(Suite::stability, 16, 1024, Data::huge, 0, true);
  add(Suite::stability, 64, 1024, Data::scaled);

  // Performance: forward and backward timed separately. Wide rows at 2048 x
  // 16384 (128 MiB per tensor, beyond any L2 or last-level cache twice
  // over); more rows would judge nothing more, at twice the seconds.
  for (const auto& [rows, dim] : {std::pair<int64_t, int64_t>{2048, 16384}, {32768, 1024}, {8192, 4096}}) {
    const bool quick = rows == 8192;
    add(Suite::perf, rows, dim, Data::normal, 0, quick, 1e-5f, Ops::forward);
    add(Suite::perf, rows, dim, Data::normal, 0, quick, 1e-5f, Ops::backward);
  }
  return cases;
}

}  // namespace layernorm
