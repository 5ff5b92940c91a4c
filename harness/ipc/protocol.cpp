#include "harness/ipc/protocol.h"

#include "harness/core/error.h"

namespace harness::protocol {

using nlohmann::json;

void to_json(json& j, const TensorBinding& b) {
  j = json{{"name", b.name},
           {"buffer", b.buffer},
           {"dtype", dtype_name(b.dtype)},
           {"elements", b.elements},
           {"access", access_name(b.access)}};
}

void from_json(const json& j, TensorBinding& b) {
  j.at("name").get_to(b.name);
  j.at("buffer").get_to(b.buffer);
  b.dtype = dtype_from_name(j.at("dtype").get<std::string>());
  j.at("elements").get_to(b.elements);
  const auto access = j.at("access").get<std::string>();
  HARNESS_CHECK(access == "in" || access == "out" || access == "state", "tensor '{}': access '{}'", b.name, access);
  b.access = access == "in" ? Access::in : access == "out" ? Access::out : Access::state;
}

void to_json(json& j, const TimingPolicy& p) {
  j = json{{"warmup_ms", p.warmup_ms}, {"min_samples", p.min_samples}, {"min_ms", p.min_ms},
           {"max_ms", p.max_ms},       {"max_samples", p.max_samples}, {"settle_tolerance", p.settle_tolerance}};
}

void from_json(const json& j, TimingPolicy& p) {
  j.at("warmup_ms").get_to(p.warmup_ms);
  j.at("min_samples").get_to(p.min_samples);
  j.at("min_ms").get_to(p.min_ms);
  j.at("max_ms").get_to(p.max_ms);
  j.at("max_samples").get_to(p.max_samples);
  j.at("settle_tolerance").get_to(p.settle_tolerance);
}

void to_json(json& j, const TimingBatch& b) {
  j = json{{"warmup", b.warmup},
           {"calls", b.calls},
           {"first_set", b.first_set},
           {"outputs_poisoned", b.outputs_poisoned},
           {"staged", b.staged}};
}

void from_json(const json& j, TimingBatch& b) {
  j.at("warmup").get_to(b.warmup);
  j.at("calls").get_to(b.calls);
  j.at("first_set").get_to(b.first_set);
  j.at("outputs_poisoned").get_to(b.outputs_poisoned);
  j.at("staged").get_to(b.staged);
}

void to_json(json& j, const Fault& f) { j = json{{"kind", f.kind}, {"sticky", f.sticky}, {"message", f.message}}; }

void from_json(const json& j, Fault& f) {
  j.at("kind").get_to(f.kind);
  j.at("sticky").get_to(f.sticky);
  j.at("message").get_to(f.message);
}

namespace {
void put_fault(json& j, const std::optional<Fault>& fault) { j["fault"] = fault ? json(*fault) : json(nullptr); }
std::optional<Fault> get_fault(const json& j) {
  if (!j.contains("fault") || j["fault"].is_null()) return std::nullopt;
  return j["fault"].get<Fault>();
}
}  // namespace

void to_json(json& j, const CallReply& r) {
  j = json{
      {"type", "reply"}, {"status", r.status}, {"message", r.message}, {"scalars", r.scalars}, {"wall_ns", r.wall_ns}};
  put_fault(j, r.fault);
}

void from_json(const json& j, CallReply& r) {
  j.at("status").get_to(r.status);
  j.at("message").get_to(r.message);
  r.scalars = j.value("scalars", json::object());
  j.at("wall_ns").get_to(r.wall_ns);
  r.fault = get_fault(j);
}

void to_json(json& j, const TimeReply& r) {
  j = json{{"type", "reply"},          {"status", r.status},    {"message", r.message},
           {"device_ns", r.device_ns}, {"wall_ns", r.wall_ns},  {"warmup_calls", r.warmup_calls},
           {"warmup_ns", r.warmup_ns}, {"setup_ns", r.setup_ns}};
  put_fault(j, r.fault);
}

void from_json(const json& j, TimeReply& r) {
  j.at("status").get_to(r.status);
  j.at("message").get_to(r.message);
  j.at("device_ns").get_to(r.device_ns);
  j.at("wall_ns").get_to(r.wall_ns);
  j.at("warmup_calls").get_to(r.warmup_calls);
  r.warmup_ns = j.value("warmup_ns", 0.0);
  r.setup_ns = j.value("setup_ns", 0.0);
  r.fault = get_fault(j);
}

}  // namespace harness::protocol
