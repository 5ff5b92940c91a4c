// Messages between the harness and a worker process.
//
// Harness -> worker: {"type": "map" | "unmap" | "call" | "time" | "exit", ...}
// Worker  -> harness: {"type": "hello" | "fatal" | "reply", ...}
// A "map" message carries the memfd of one SharedBuffer; "call" and "time"
// name buffers by id. Every reply to "call"/"time" carries the submission's
// status and, when the worker itself hit a problem (an unknown op, a CUDA
// error), a fault.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/dtype.h"

namespace harness::protocol {

constexpr int kVersion = 1;

// in: read by the op, must stay unchanged. out: written entirely by the op.
// opaque: written by the op for the submission's own later use (a saved
// state): poisoned and guarded like an output, but its content is the
// submission's business, so elements left unwritten are not an error.
enum class Access { in, out, opaque };

inline bool is_written(Access access) { return access != Access::in; }

// One tensor argument of an op.
struct TensorBinding {
  std::string name;
  uint64_t buffer = 0;
  DType dtype = DType::f32;
  size_t elements = 0;
  Access access = Access::in;
};

struct TimingPolicy {
  double warmup_ms = 20;       // warm-up calls run for at least this long...
  size_t min_samples = 10;     // ...then at least this many timed calls
  double min_ms = 100;         // and at least this much timed work,
  double max_ms = 2000;        // and never more than this,
  size_t max_samples = 1000;   // or this many calls,
  double settle_tolerance = 0.01;  // stopping early once the median moves less than this
};

struct Fault {
  std::string kind;  // "cuda_error" | "worker_error"
  bool sticky = false;  // the worker cannot go on (a poisoned CUDA context)
  std::string message;
};

struct CallReply {
  int32_t status = 0;
  std::string message;
  nlohmann::json scalars = nlohmann::json::object();
  double wall_ns = 0;
  std::optional<Fault> fault;
};

struct TimeReply {
  int32_t status = 0;
  std::string message;
  std::optional<Fault> fault;
  std::vector<double> device_ns;  // per timed call: CUDA events (GPU) or the monotonic clock (CPU)
  std::vector<double> wall_ns;    // per timed call: host clock around call and device synchronisation
  size_t warmup_calls = 0;
};

void to_json(nlohmann::json& j, const TensorBinding& b);
void from_json(const nlohmann::json& j, TensorBinding& b);
void to_json(nlohmann::json& j, const TimingPolicy& p);
void from_json(const nlohmann::json& j, TimingPolicy& p);
void to_json(nlohmann::json& j, const Fault& f);
void from_json(const nlohmann::json& j, Fault& f);
void to_json(nlohmann::json& j, const CallReply& r);
void from_json(const nlohmann::json& j, CallReply& r);
void to_json(nlohmann::json& j, const TimeReply& r);
void from_json(const nlohmann::json& j, TimeReply& r);

}  // namespace harness::protocol
