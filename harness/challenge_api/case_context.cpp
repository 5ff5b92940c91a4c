#include "harness/challenge_api/case_context.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>

#include "harness/core/bulk_bytes.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness/definitions/op_call_check.h"
#include "harness_abi.h"

namespace harness {

namespace {

std::atomic<uint64_t> next_tensor_id{1};

std::string status_name(int32_t status) {
  switch (status) {
    case HARNESS_STATUS_OK: return "OK";
    case HARNESS_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case HARNESS_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case HARNESS_STATUS_ERROR: return "ERROR";
    case HARNESS_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    default: return "not a harness_status";
  }
}

}  // namespace

CaseContext::CaseContext(const CaseSpec& spec, const RunSettings& settings, Executor& executor,
                         const DeviceInfo& device, CaseResult& result, const ChallengeOps& ops)
    : spec_(spec),
      settings_(settings),
      executor_(executor),
      device_(device),
      result_(result),
      ops_(ops),
      bytes_(spec.bytes) {}

CaseContext::~CaseContext() {
  for (const auto& t : tensors_) {
    try {
      executor_.release(*t);
    } catch (...) {
      // Only where the case already failed (release_tensors() ran
      // otherwise): a worker that died cannot unmap; its buffers went with it.
    }
  }
}

void CaseContext::release_tensors() {
  for (const auto& t : tensors_) executor_.release(*t);
}

bool judged_cold(double set_bytes, size_t sets, const ByteModel& bytes, uint64_t cache_bytes) {
  const double twice_cache = 2.0 * static_cast<double>(cache_bytes);
  return set_bytes * static_cast<double>(sets) >= twice_cache || bytes.total() >= twice_cache;
}

uint64_t CaseContext::input_seed(size_t set) const { return derive_seed(result_.seed, set); }

size_t CaseContext::secret_index(size_t n) {
  HARNESS_CHECK(n > 0, "a secret index below 0");
  return static_cast<size_t>(secret().below(n));
}

uint64_t CaseContext::secret_seed() { return secret().next_u64(); }

Rng& CaseContext::secret() {
  if (!secret_) secret_.emplace((uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());
  return *secret_;
}

uint64_t CaseContext::guard_seed() const { return derive_seed(result_.seed, "guard-bands"); }

size_t CaseContext::timing_sets(double bytes_per_set) const {
  const double cache = std::max<double>(static_cast<double>(device_.cache_bytes), 1 << 20);
  const double wanted = std::ceil(2.0 * cache / std::max(bytes_per_set, 1.0));
  return static_cast<size_t>(std::clamp(wanted, 2.0, 64.0));
}

SharedTensor& CaseContext::tensor(TensorSpec spec) {
  tensors_.push_back(std::make_unique<SharedTensor>(next_tensor_id++, std::move(spec)));
  return *tensors_.back();
}

void CaseContext::fail(Verdict verdict, const std::string& message) const { throw VerdictException(verdict, message); }

void CaseContext::note_failure(Verdict verdict, const std::string& message) {
  for (const Finding& f : result_.other_failures) {
    if (f.verdict == verdict) return;
  }
  result_.other_failures.push_back(Finding{verdict, message});
}

void CaseContext::guard_and_poison(const std::vector<Binding>& bindings) {
  for (const Binding& b : bindings) {
    HARNESS_CHECK(b.tensor != nullptr, "a binding of op arguments has no tensor");
    b.tensor->buffer().fill_guards(guard_seed());
    if (protocol::is_written(b.access)) fill_poison(b.tensor->raw(), b.tensor->elements(), b.tensor->spec().dtype);
  }
}

void CaseContext::keep_pristine(const SharedTensor& tensor, const void* bytes) {
  HARNESS_CHECK(bytes != nullptr, "no pristine copy of input {}", tensor.spec().name);
  pristine_[&tensor] = static_cast<const unsigned char*>(bytes);
}

void CaseContext::prepare(const std::vector<Binding>& bindings, std::vector<Snapshot>& snapshots) {
  guard_and_poison(bindings);
  for (const Binding& b : bindings) {
    if (protocol::is_written(b.access)) continue;
    const auto kept = pristine_.find(b.tensor);
    if (kept != pristine_.end()) {
      snapshots.push_back(Snapshot{b.tensor, {}, kept->second});
      continue;
    }
    const auto* bytes = static_cast<const unsigned char*>(b.tensor->raw());
    snapshots.push_back(Snapshot{b.tensor, std::vector<unsigned char>(bytes, bytes + b.tensor->bytes())});
  }
}

void CaseContext::check_status(int32_t status, const std::string& message, const std::string& op) const {
  if (status == HARNESS_STATUS_OK) return;
  const std::string text = message.empty() ? "(no message)" : message;
  if (status == HARNESS_STATUS_UNSUPPORTED) fail(Verdict::unsupported, fmt::format("{}: {}", op, text));
  fail(Verdict::error, fmt::format("{} returned status {} ({}): {}", op, status, status_name(status), text));
}

void CaseContext::check_integrity(const std::vector<Binding>& bindings, const std::vector<Snapshot>& snapshots,
                                  const std::string& when, bool require_written) const {
  for (const Binding& b : bindings) {
    const auto damage = b.tensor->buffer().check_guards(guard_seed());
    if (damage.damaged) {
      fail(Verdict::out_of_bounds_write,
           fmt::format("{}: {} bytes written outside {} ({}); the nearest {} bytes {} its {}", when,
                       damage.bytes_changed, b.tensor->spec().name, b.tensor->spec().describe(), damage.distance,
                       damage.before ? "before" : "after", damage.before ? "start" : "end"));
    }
  }
  for (const Snapshot& s : snapshots) {
    const auto& spec = s.tensor->spec();
    const size_t element = dtype_size(spec.dtype);
    const auto* now = static_cast<const unsigned char*>(s.tensor->raw());
    const unsigned char* then = s.data();
    if (same_bytes(now, then, s.tensor->bytes())) continue;
    size_t changed = 0;
    size_t first = 0;
    for (size_t i = 0; i < spec.elements(); ++i) {
      if (std::memcmp(now + i * element, then + i * element, element) != 0) {
        if (changed++ == 0) first = i;
      }
    }
    fail(Verdict::input_modified,
         fmt::format("{}: input {} was modified: {} of {} elements changed; first at {}: {} became {}", when, spec.name,
                     changed, spec.elements(), format_index(first, spec.shape), format_element(then, first, spec.dtype),
                     format_element(now, first, spec.dtype)));
  }
  for (const Binding& b : bindings) {
    if (!require_written || b.access != protocol::Access::out) continue;
    const auto& spec = b.tensor->spec();
    size_t first = 0;
    const size_t left = count_poison(b.tensor->raw(), spec.elements(), spec.dtype, &first);
    if (left > 0) {
      fail(Verdict::unwritten_output,
           fmt::format("{}: output {} left unwritten: {} of {} elements still hold the poison; first at {}", when,
                       spec.name, left, spec.elements(), format_index(first, spec.shape)));
    }
  }
}

std::vector<Binding> CaseContext::bind(const std::string& op, const nlohmann::json& scalars,
                                       const std::vector<SharedTensor*>& tensors) const {
  const OpDeclaration& declaration = ops_.at(op);
  std::vector<CallTensor> given;
  for (const SharedTensor* t : tensors) {
    HARNESS_CHECK(t != nullptr, "a call of {} binds no tensor", op);
    given.push_back(CallTensor{t->spec().name, t->spec().dtype, t->spec().shape});
  }
  const std::string disagreement = call_disagreement(ops_, declaration, scalars, given);
  HARNESS_CHECK(disagreement.empty(), "{}", disagreement);
  std::vector<Binding> bindings;
  for (const OpParameter* p : declaration.of_kind(ParameterKind::tensor)) {
    const auto it =
        std::find_if(tensors.begin(), tensors.end(), [&](const SharedTensor* t) { return t->spec().name == p->name; });
    bindings.push_back(Binding{*it, p->access});
  }
  return bindings;
}

void CaseContext::check_results(const std::string& op, const protocol::CallReply& reply) const {
  const OpDeclaration& declaration = ops_.at(op);
  std::vector<const OpParameter*> results = declaration.of_kind(ParameterKind::result);
  if (declaration.returns) results.push_back(&*declaration.returns);
  for (const OpParameter* p : results) {
    const auto it = reply.scalars.find(p->name);
    const bool integer = p->dtype == DType::i32 || p->dtype == DType::i64;
    if (it == reply.scalars.end() || !(integer ? it->is_number_integer() : it->is_number())) {
      fail(Verdict::error, fmt::format("{} reported no {} '{}' ({})", op, integer ? "integer" : "number", p->name,
                                       declaration.c_signature()));
    }
  }
}

protocol::CallReply CaseContext::call(const std::string& op, const nlohmann::json& scalars,
                                      const std::vector<SharedTensor*>& tensors,
                                      const std::vector<int32_t>& tolerated) {
  const std::vector<Binding> bindings = bind(op, scalars, tensors);
  std::vector<Snapshot> snapshots;
  prepare(bindings, snapshots);
  protocol::CallReply reply = executor_.call(op, scalars, bindings, settings_.call_timeout_s);
  if (std::find(tolerated.begin(), tolerated.end(), reply.status) != tolerated.end()) {
    // Refused as the workload allows: the outputs need not be written, but
    // nothing outside them may be, and no input may change.
    check_integrity(bindings, snapshots, fmt::format("call of {}", op), false);
    return reply;
  }
  check_status(reply.status, reply.message, op);
  check_integrity(bindings, snapshots, fmt::format("call of {}", op));
  check_results(op, reply);
  return reply;
}

}  // namespace harness
