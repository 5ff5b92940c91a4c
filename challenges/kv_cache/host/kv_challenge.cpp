// kv_cache: the harness side of the challenge (README.md beside this
// folder): scripted workloads over a stateful cache, memory and capacity
// scores from what the workloads measured.
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kv_cache.h"
#include "kv_case.h"
#include "workloads.h"

namespace kv {

namespace {

class KvCacheChallenge : public harness::Challenge {
 public:
  std::string name() const override { return "kv_cache"; }
  int abi_version() const override { return KV_CACHE_ABI_VERSION; }
  std::vector<harness::CaseSpec> cases() const override { return case_matrix(); }

  void run_case(const harness::CaseSpec& spec, harness::CaseContext& ctx) const override {
    run_workload(ctx, kv_case_of(spec), tolerances());
  }

  // The controls' view of a cache: queries answered as an fp32 cache holding
  // nothing would, attention outputs from other data.
  nlohmann::json solve(const std::string& op, const nlohmann::json&,
                       const std::map<std::string, harness::TensorView>& inputs,
                       const std::map<std::string, void*>& outputs) const override {
    if (op == "format") return {{"format", KV_CACHE_FORMAT_FP32}};
    if (op == "bytes_in_use") return {{"bytes", 0}};
    if (op == "attend") {
      const harness::TensorView& q = inputs.at("q");
      auto* out = static_cast<float*>(outputs.at("out"));
      harness::Rng rng(0xA77E4D);
      for (size_t i = 0; i < q.elements(); ++i) out[i] = static_cast<float>(rng.normal());
    }
    return nlohmann::json::object();
  }

  std::map<std::string, harness::DimensionScore> extra_dimensions(const harness::EntryResult& entry) const override {
    harness::DimensionScore memory, capacity;
    double memory_sum = 0, worst_overhead = 0;
    size_t memory_cases = 0;
    for (const auto& c : entry.cases) {
      // A case that did not pass scores 0 here too: its readings up to the
      // failure (an understated_memory case keeps the good ones before the
      // reading that failed it) are no measure of the cache.
      const bool passed = c.verdict == harness::Verdict::pass;
      if (c.metrics.contains("memory_overhead") && c.metrics["memory_overhead"].is_number()) {
        const double overhead = c.metrics["memory_overhead"].get<double>();
        if (passed) memory_sum += overhead > 0 ? std::min(1.0, 1.0 / overhead) : 0.0;
        worst_overhead = std::max(worst_overhead, overhead);
        ++memory_cases;
      }
      if (c.metrics.contains("capacity_tokens")) {
        const double held = c.metrics["capacity_tokens"].get<double>();
        const double ideal = c.metrics["capacity_ideal_tokens"].get<double>();
        capacity.measured = true;
        capacity.score = passed ? 100.0 * std::min(1.0, held / ideal) : 0.0;
        capacity.detail =
            fmt::format("{:.0f} live tokens in the budget that holds {:.0f} in fp32 at the minimum", held, ideal);
      }
    }
    memory.measured = memory_cases > 0;
    memory.score = memory_cases ? 100.0 * memory_sum / static_cast<double>(memory_cases) : 0.0;
    memory.detail =
        memory_cases ? fmt::format("bytes in use up to {:.2f}x the K and V of the live tokens", worst_overhead) : "";
    return {{"memory", memory}, {"capacity", capacity}};
  }

 private:
  FormatTolerances tolerances() const {
    FormatTolerances t;
    const auto& config = this->config().tolerances;
    const std::pair<const char*, int32_t> formats[] = {
        {"fp32", KV_CACHE_FORMAT_FP32}, {"fp16", KV_CACHE_FORMAT_FP16}, {"int8", KV_CACHE_FORMAT_INT8}};
    for (const auto& [name, format] : formats) {
      const auto& value = config.at(name);
      t[format] = harness::Tolerance{value.at("rtol").get<double>(), value.at("scale_atol").get<double>(),
                                     value.value("float32_factor", 0.0)};
    }
    return t;
  }
};

}  // namespace

HARNESS_REGISTER_CHALLENGE(KvCacheChallenge);

}  // namespace kv
