// The case matrix of attention (README.md, "Cases").
#include <fmt/format.h>

#include <cmath>

#include "attention/sdpa_reference.h"
#include "attn_case.h"
#include "harness/core/error.h"

namespace attention {

using harness::CaseSpec;
using harness::Suite;

namespace {

const std::pair<Data, const char*> kDataNames[] = {{Data::normal, "normal"},       {Data::huge, "huge"},
                                                   {Data::tiny, "tiny"},           {Data::flat, "flat"},
                                                   {Data::max_jumps, "max_jumps"}, {Data::one_hot, "one_hot"}};

Data data_from_name(const std::string& name) {
  for (const auto& [data, text] : kDataNames) {
    if (name == text) return data;
  }
  HARNESS_FAIL("unknown attention data kind '{}'", name);
}

Op op_from_name(const std::string& name) {
  if (name == "forward") return Op::forward;
  HARNESS_CHECK(name == "backward", "unknown attention op '{}'", name);
  return Op::backward;
}

// A perf case's shape on each device: the GPU's are the workloads of the
// README; the CPU's are the same kinds, small enough for a 2-core machine.
struct PerfShape {
  const char* name;
  AttnCase cpu;
  AttnCase cuda;
  const char* what;
};

const PerfShape kPerfShapes[] = {
    {"prefill", {1, 4, 4, 512, 512, 64, true}, {4, 32, 32, 4096, 4096, 128, true}, "prefill-like, causal"},
    {"long", {1, 1, 1, 256, 8192, 64, false}, {1, 8, 8, 16384, 16384, 128, true}, "long context"},
    {"gqa", {1, 8, 2, 512, 512, 128, true}, {4, 32, 8, 4096, 4096, 128, true}, "grouped query heads, causal"},
};

const PerfShape& perf_shape(const std::string& name) {
  for (const PerfShape& shape : kPerfShapes) {
    if (name == shape.name) return shape;
  }
  HARNESS_FAIL("unknown attention perf shape '{}'", name);
}

void set_shape_params(nlohmann::json& params, const AttnCase& c) {
  params["batch"] = c.batch;
  params["heads_q"] = c.heads_q;
  params["heads_kv"] = c.heads_kv;
  params["n_q"] = c.n_q;
  params["n_kv"] = c.n_kv;
  params["dim"] = c.dim;
  params["causal"] = c.causal;
}

std::string shape_label(const AttnCase& c) {
  return fmt::format("b{}.h{}x{}.q{}.k{}.d{}{}", c.batch, c.heads_q, c.heads_kv, c.n_q, c.n_kv, c.dim,
                     c.causal ? ".causal" : "");
}

}  // namespace

float AttnCase::scale() const {
  return given_scale != 0 ? given_scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
}

double AttnCase::flops() const {
  const reference::SdpaShape s{n_q, n_kv, dim, 1.0, causal};
  double pairs = 0;
  for (int64_t i = 0; i < n_q; ++i) pairs += static_cast<double>(reference::sdpa_visible_keys(s, i));
  const double forward = 4.0 * static_cast<double>(dim) * pairs * static_cast<double>(batch * heads_q);
  return op == Op::forward ? forward : 2.5 * forward;
}

std::string data_name(Data data) {
  for (const auto& [d, text] : kDataNames) {
    if (d == data) return text;
  }
  return "?";
}

std::string op_name(Op op) { return op == Op::forward ? "forward" : "backward"; }

harness::ByteModel bytes_of(const AttnCase& c) {
  const auto q = 4.0 * static_cast<double>(c.q_rows() * c.dim), kv = 4.0 * static_cast<double>(c.kv_rows() * c.dim),
             lse = 4.0 * static_cast<double>(c.q_rows());
  if (c.op == Op::forward) return {q + 2 * kv, q + lse};
  return {3 * q + lse + 2 * kv, q + 2 * kv};
}

AttnCase attn_case_of(const CaseSpec& spec, const std::string& device_kind) {
  const Op op = op_from_name(spec.params.at("op").get<std::string>());
  if (spec.params.contains("perf_shape")) {
    const PerfShape& shape = perf_shape(spec.params["perf_shape"].get<std::string>());
    AttnCase c = device_kind == "cuda" ? shape.cuda : shape.cpu;
    c.op = op;
    return c;
  }
  AttnCase c;
  c.batch = spec.params.at("batch").get<int64_t>();
  c.heads_q = spec.params.at("heads_q").get<int64_t>();
  c.heads_kv = spec.params.at("heads_kv").get<int64_t>();
  c.n_q = spec.params.at("n_q").get<int64_t>();
  c.n_kv = spec.params.at("n_kv").get<int64_t>();
  c.dim = spec.params.at("dim").get<int64_t>();
  c.causal = spec.params.at("causal").get<bool>();
  c.data = data_from_name(spec.params.at("data").get<std::string>());
  c.op = op;
  return c;
}

std::vector<CaseSpec> case_matrix() {
  std::vector<CaseSpec> cases;
  // Every shape is a forward case and a backward case: the backward is fed
  // the harness's own o and lse, so each op is judged on its own.
  auto add = [&](Suite suite, AttnCase c, bool quick = false) {
    for (Op op : {Op::forward, Op::backward}) {
      c.op = op;
      CaseSpec spec;
      spec.suite = suite;
      spec.id = fmt::format("{}.{}.{}.{}", harness::suite_name(suite), op_name(op), data_name(c.data), shape_label(c));
      set_shape_params(spec.params, c);
      spec.params["data"] = data_name(c.data);
      spec.params["op"] = op_name(op);
      spec.description = fmt::format(
          "{}: batch {}, {} query heads over {} kv heads, {} queries x {} keys, dim {}{}, "
          "{} data",
          op_name(op), c.batch, c.heads_q, c.heads_kv, c.n_q, c.n_kv, c.dim, c.causal ? ", causal" : "",
          data_name(c.data));
      spec.quick = quick;
      cases.push_back(spec);
    }
  };
  using D = Data;
  // Correctness: causal and not, odd lengths, GQA groups of 1, 4 and 8,
  // n_q below and above n_kv, every dim of the README.
  add(Suite::correctness, {2, 4, 4, 128, 128, 64, false}, true);
  add(Suite::correctness, {2, 4, 4, 128, 128, 64, true}, true);
  add(Suite::correctness, {1, 2, 2, 77, 77, 32, true});
  add(Suite::correctness, {1, 8, 2, 100, 100, 96, true}, true);
  add(Suite::correctness, {1, 8, 1, 64, 200, 128, true});
  add(Suite::correctness, {1, 2, 2, 200, 65, 64, true}, true);
  add(Suite::correctness, {1, 4, 4, 300, 300, 128, false});
  add(Suite::correctness, {2, 2, 1, 33, 129, 64, false});
  // Long enough that a score matrix per head outgrows what tiles need.
  add(Suite::correctness, {1, 2, 2, 1024, 1024, 64, true});

  // Edge: one key, one query, length 1 against 16384 (both ways), one-row
  // last tiles (2^k + 1), n = 1, huge, tiny and flat magnitudes.
  add(Suite::edge, {1, 2, 2, 16, 1, 64, false}, true);
  add(Suite::edge, {1, 2, 2, 1, 1000, 64, true});
  add(Suite::edge, {1, 2, 1, 1, 16384, 128, true});
  add(Suite::edge, {1, 1, 1, 16384, 1, 64, true}, true);
  add(Suite::edge, {1, 2, 2, 129, 129, 64, true}, true);
  add(Suite::edge, {1, 1, 1, 257, 257, 32, false});
  add(Suite::edge, {1, 1, 1, 1, 1, 32, true});
  add(Suite::edge, {1, 2, 2, 64, 64, 64, true, D::huge});
  add(Suite::edge, {1, 2, 2, 64, 64, 64, true, D::tiny});
  add(Suite::edge, {1, 2, 2, 96, 96, 64, false, D::flat});

  // Stability: scores whose maximum jumps by thousands from one key block to
  // the next; a long row's float32 sums; near one-hot rows.
  add(Suite::stability, {1, 2, 2, 128, 512, 64, false, D::max_jumps}, true);
  add(Suite::stability, {1, 2, 2, 300, 300, 64, true, D::max_jumps});
  add(Suite::stability, {1, 2, 1, 16, 16384, 64, false});
  add(Suite::stability, {1, 2, 2, 128, 128, 64, true, D::one_hot}, true);

  // Performance: each op timed alone, on shapes chosen per device.
  for (const PerfShape& shape : kPerfShapes) {
    for (Op op : {Op::forward, Op::backward}) {
      CaseSpec spec;
      spec.suite = Suite::perf;
      spec.id = fmt::format("perf.{}.{}", op_name(op), shape.name);
      spec.params = {{"perf_shape", shape.name}, {"op", op_name(op)}, {"data", "normal"}};
      spec.description = fmt::format("{} timed, {}: on a GPU {}, on a CPU {}", op_name(op), shape.what,
                                     shape_label(shape.cuda), shape_label(shape.cpu));
      spec.quick = std::string(shape.name) == "prefill";
      cases.push_back(spec);
    }
  }
  return cases;
}

}  // namespace attention
