#include "harness/executors/control_executor.h"

#include <cstring>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace harness {

namespace {

void fill_ones(void* data, size_t count, DType dtype) {
  for (size_t i = 0; i < count; ++i) {
    switch (dtype) {
      case DType::f32: static_cast<float*>(data)[i] = 1.0f; break;
      case DType::f64: static_cast<double*>(data)[i] = 1.0; break;
      case DType::f16: static_cast<uint16_t*>(data)[i] = 0x3C00; break;
      case DType::i32: static_cast<int32_t*>(data)[i] = 1; break;
      case DType::i64: static_cast<int64_t*>(data)[i] = 1; break;
      case DType::u8: static_cast<uint8_t*>(data)[i] = 1; break;
    }
  }
}

// Plausible values for an input of another seed: normals for float32/64,
// values in [0.5, 1) for float16, small non-negative integers otherwise.
void fill_random(HostTensor& t, Rng& rng) {
  for (size_t i = 0; i < t.elements(); ++i) {
    switch (t.spec().dtype) {
      case DType::f32: t.as<float>()[i] = static_cast<float>(rng.normal()); break;
      case DType::f64: t.as<double>()[i] = rng.normal(); break;
      case DType::i32: t.as<int32_t>()[i] = static_cast<int32_t>(rng.below(100)); break;
      case DType::i64: t.as<int64_t>()[i] = static_cast<int64_t>(rng.below(100)); break;
      case DType::f16: t.as<uint16_t>()[i] = static_cast<uint16_t>(0x3800 + rng.below(0x0800)); break;  // [0.5, 1)
      case DType::u8: t.as<uint8_t>()[i] = static_cast<uint8_t>(rng.below(100)); break;
    }
  }
}

}  // namespace

std::vector<ControlKind> all_controls() {
  return {ControlKind::zeros, ControlKind::constant, ControlKind::input_copy, ControlKind::other_seed};
}

std::string control_name(ControlKind kind) {
  switch (kind) {
    case ControlKind::zeros: return "control-zeros";
    case ControlKind::constant: return "control-constant";
    case ControlKind::input_copy: return "control-input-copy";
    case ControlKind::other_seed: return "control-other-seed";
  }
  return "control-?";
}

std::string control_description(ControlKind kind) {
  switch (kind) {
    case ControlKind::zeros: return "negative control: every output element is 0";
    case ControlKind::constant: return "negative control: every output element is 1";
    case ControlKind::input_copy: return "negative control: the outputs hold a copy of the first input's bytes";
    case ControlKind::other_seed: return "negative control: the correct answer for other inputs of the same shape";
  }
  return "";
}

ControlExecutor::ControlExecutor(ControlKind kind, const Challenge& challenge) : kind_(kind), challenge_(challenge) {}

nlohmann::json ControlExecutor::answer(const std::string& op, const nlohmann::json& scalars,
                                       const std::vector<Binding>& tensors) {
  const SharedTensor* first_input = nullptr;
  std::map<std::string, void*> outputs;
  for (const Binding& b : tensors) {
    if (b.access == protocol::Access::in && !first_input) first_input = b.tensor;
    if (protocol::is_written(b.access)) outputs[b.tensor->spec().name] = b.tensor->raw();
  }
  for (const Binding& b : tensors) {
    if (!protocol::is_written(b.access)) continue;
    SharedTensor& out = *b.tensor;
    switch (kind_) {
      case ControlKind::zeros: std::memset(out.raw(), 0, out.bytes()); break;
      case ControlKind::constant: fill_ones(out.raw(), out.elements(), out.spec().dtype); break;
      case ControlKind::input_copy: {
        HARNESS_CHECK(first_input && first_input->bytes() > 0, "op {} has no input to copy", op);
        auto* target = static_cast<unsigned char*>(out.raw());
        const auto* source = static_cast<const unsigned char*>(first_input->raw());
        for (size_t done = 0; done < out.bytes();) {
          const size_t n = std::min(first_input->bytes(), out.bytes() - done);
          std::memcpy(target + done, source, n);
          done += n;
        }
        break;
      }
      case ControlKind::other_seed: break;  // below, once for all outputs
    }
  }
  // Queries (ops without outputs) get the trusted answer: a control is
  // wrong in its outputs, not in what it reports about itself.
  if (outputs.empty()) return challenge_.solve(op, scalars, {}, {});
  if (kind_ == ControlKind::other_seed) {
    Rng rng(0x5EED0F07E85EEDULL);
    std::vector<HostTensor> others;
    others.reserve(tensors.size());
    std::map<std::string, TensorView> inputs;
    for (const Binding& b : tensors) {
      if (b.access != protocol::Access::in) continue;
      others.emplace_back(b.tensor->spec());
      fill_random(others.back(), rng);
      inputs[b.tensor->spec().name] = TensorView{&others.back().spec(), others.back().raw()};
    }
    return challenge_.solve(op, scalars, inputs, outputs);
  }
  return nlohmann::json::object();
}

protocol::CallReply ControlExecutor::call(const std::string& op, const nlohmann::json& scalars,
                                          const std::vector<Binding>& tensors, double) {
  protocol::CallReply reply;
  const int64_t start = monotonic_ns();
  reply.scalars = answer(op, scalars, tensors);
  reply.wall_ns = static_cast<double>(monotonic_ns() - start);
  return reply;
}

protocol::TimeReply ControlExecutor::time(const std::string& op, const nlohmann::json& scalars,
                                          const std::vector<std::vector<Binding>>& sets,
                                          const protocol::TimingPolicy& policy, double, const FreshInputs&) {
  protocol::TimeReply reply;
  for (size_t i = 0; i < std::max(policy.min_samples, sets.size()); ++i) {
    const int64_t start = monotonic_ns();
    answer(op, scalars, sets[i % sets.size()]);
    const auto elapsed = static_cast<double>(monotonic_ns() - start);
    reply.device_ns.push_back(elapsed);
    reply.wall_ns.push_back(elapsed);
  }
  return reply;
}

}  // namespace harness
