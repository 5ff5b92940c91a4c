// Messages between the harness and a worker process.
// Harness -> worker: {"type": "map" | "unmap" | "trim" | "upload" | "download" | "call" | "time" | "exit", ...}
// Worker  -> harness: {"type": "hello" | "fatal" | "reply", ...}
// "map" carries the memfd of one SharedBuffer; "call" and "time" name buffers by id; "upload" and
// "download" copy them to and from the worker's device (a no-op on the CPU) for a staged "time". Every
// reply to "call"/"time" carries the submission's status and, when the worker itself hit a problem (an
// unknown op, a CUDA error), a fault.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/dtype.h"
#include "harness/definitions/op_declaration.h"

namespace harness::protocol {

constexpr int kVersion = 1;

// How an op uses each tensor (harness/definitions/op_declaration.h).
using harness::Access;
using harness::is_written;

// One tensor argument of an op.
struct TensorBinding {
  std::string name;
  uint64_t buffer = 0;
  DType dtype = DType::f32;
  size_t elements = 0;
  Access access = Access::in;
};

struct TimingPolicy {
  double warmup_ms = 20;           // warm-up calls run for at least this long...
  size_t min_samples = 10;         // ...then at least this many timed calls
  double min_ms = 100;             // and at least this much timed work,
  double max_ms = 2000;            // and never more than this,
  size_t max_samples = 1000;       // or this many calls,
  double settle_tolerance = 0.01;  // stopping early once the median moves less than this
};

// One batch of a timing the harness drives itself (WorkerExecutor): exactly
// `warmup` untimed calls, then exactly `calls` timed ones, rotating through
// the sets from `first_set`. The harness sets the count, so that its own
// clock around the request bounds the time per call (the timing witness).
struct TimingBatch {
  size_t warmup = 0;
  size_t calls = 0;
  size_t first_set = 0;
  // The harness poisoned every set's outputs just before this request (a
  // round of fresh inputs: each set called once): the worker need not
  // poison them again before a set's first call in it.
  bool outputs_poisoned = false;
  // The sets are on the device already (an "upload" request just before)
  // and stay there (a "download" request after): the request holds the
  // calls alone, so that the harness's clock around it sees them and not
  // the copies (the timing witness on a GPU).
  bool staged = false;
};

struct Fault {
  std::string kind;     // "cuda_error" | "worker_error"
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

// One timing request as the harness saw it (the timing witness; see
// harness/witness/timing_witness.h): its own clock around the request, the
// calls it asked for, and what the worker claimed they took.
struct WitnessedRequest {
  double ns = 0;                // the harness's clock around the request
  size_t warmup_calls = 0;      // asked for, untimed
  size_t timed_calls = 0;       // asked for, timed
  double claimed_ns = 0;        // the worker's times of all those calls, summed
  double claimed_setup_ns = 0;  // the worker's device copies before and after its loop
  double staging_ns = 0;        // the harness's clock around the round's upload and download, when staged
};

struct TimeReply {
  int32_t status = 0;
  std::string message;
  std::optional<Fault> fault;
  std::vector<double> device_ns;  // per timed call: CUDA events (GPU) or the monotonic clock (CPU)
  std::vector<double> wall_ns;    // per timed call: host clock around call and device synchronisation
  size_t warmup_calls = 0;
  double warmup_ns = 0;  // host clock around the warm-up calls, summed like wall_ns
  double setup_ns = 0;   // binding the sets before the loop and handing outputs back after (device copies)
  // Not part of the message: every request as the harness's own clock saw
  // it, recorded by an executor whose samples come from another process;
  // empty where the samples are the harness's own.
  std::vector<WitnessedRequest> witnessed;
  // Not part of the message: whether the timed requests held the calls alone
  // (TimingBatch::staged), and the harness's clock around the uploads and
  // downloads that then came between them.
  bool staged = false;
  double staging_ns = 0;
  // Not part of the message: the harness copied the sets into and out of
  // device memory it owns itself, and each request held the calls alone.
  bool harness_copies = false;
};

void to_json(nlohmann::json& j, const TensorBinding& b);
void from_json(const nlohmann::json& j, TensorBinding& b);
void to_json(nlohmann::json& j, const TimingPolicy& p);
void from_json(const nlohmann::json& j, TimingPolicy& p);
void to_json(nlohmann::json& j, const TimingBatch& b);
void from_json(const nlohmann::json& j, TimingBatch& b);
void to_json(nlohmann::json& j, const Fault& f);
void from_json(const nlohmann::json& j, Fault& f);
void to_json(nlohmann::json& j, const CallReply& r);
void from_json(const nlohmann::json& j, CallReply& r);
void to_json(nlohmann::json& j, const TimeReply& r);
void from_json(const nlohmann::json& j, TimeReply& r);

}  // namespace harness::protocol
