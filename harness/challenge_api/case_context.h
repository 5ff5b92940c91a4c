// The primitives a challenge's case driver uses, and the one place where
// every anti-cheating check happens: guard bands, poisoned outputs, inputs
// compared with a pristine copy, statuses, timing over rotating input sets.
// A driver allocates tensors, fills inputs, calls ops and checks values;
// everything else is done here, identically for every challenge.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/challenge_api/case_spec.h"
#include "harness/challenge_api/executor.h"
#include "harness/challenge_api/input_stage.h"
#include "harness/challenge_api/run_settings.h"
#include "harness/core/rng.h"
#include "harness/definitions/op_declaration.h"
#include "harness/device/device_info.h"
#include "harness/results/results.h"

namespace harness {

// Whether timed calls really missed the device's cache: the rotating sets
// together exceed twice the cache, or one call alone must move that much by
// the byte model. State a call reads that is not among its bound tensors (a
// KV cache's keys and values) counts through the byte model, so an answer
// replayed from memory is judged against what the call had to read.
bool judged_cold(double set_bytes, size_t sets, const ByteModel& bytes, uint64_t cache_bytes);

// Rows (or sequences) of every input set that a driver checks between
// rounds of timed calls (a spot check, beside the full check at the end).
inline constexpr size_t kSpotCheckedRows = 2;

class CaseContext {
 public:
  CaseContext(const CaseSpec& spec, const RunSettings& settings, Executor& executor, const DeviceInfo& device,
              CaseResult& result, const ChallengeOps& ops);
  ~CaseContext();
  // Gives the case's tensors back (a process submission unmaps them) as the
  // case ends: a failure to let go is this case's verdict, where the
  // destructor could only drop it.
  void release_tensors();
  CaseContext(const CaseContext&) = delete;
  CaseContext& operator=(const CaseContext&) = delete;

  const CaseSpec& spec() const { return spec_; }
  const RunSettings& settings() const { return settings_; }
  const DeviceInfo& device() const { return device_; }
  const ChallengeOps& ops() const { return ops_; }
  // Seed of input set `set` of this case (set 0 and 1 are the checked calls).
  uint64_t input_seed(size_t set) const;
  // An index below `n` that no submission can foresee: drawn from the
  // system's entropy, not from the printed seed, which a worker can read off
  // the harness's command line. For spot checks of rows between rounds of
  // timed calls: which rows is never part of what a case reproduces.
  size_t secret_index(size_t n);
  // A seed no submission can foresee, from the same source, for the new
  // inputs of each round of timed calls: derived from the printed seed, they
  // and their answers could be computed ahead. So the case and its checked
  // inputs reproduce from the printed seed, the timed rounds' inputs do not.
  uint64_t secret_seed();
  // True for perf cases: drivers then call time() after their checked calls.
  bool timing_wanted() const { return spec_.suite == Suite::perf; }
  // How many input sets to rotate through so that together they exceed
  // twice the device's cache (at least 2, at most 64).
  size_t timing_sets(double bytes_per_set) const;

  // A new tensor in shared memory, released with the context.
  SharedTensor& tensor(TensorSpec spec);

  // One checked call: guards set, outputs poisoned, inputs snapshotted; after
  // the call the status, guards, inputs and poison are checked, in that order,
  // and the first problem ends the case with its verdict. A status in
  // `tolerated` (HARNESS_STATUS_OUT_OF_MEMORY where a workload expects a
  // refusal) is returned instead; guards and inputs are still checked, outputs
  // not. `tensors` bind by name to the op's declared tensors; a call that
  // disagrees with the declaration is the harness's own error.
  protocol::CallReply call(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<SharedTensor*>& tensors, const std::vector<int32_t>& tolerated = {});

  // The byte model of this case when it depends on what the submission
  // declared (a cache's storage format); used for the bandwidth of time().
  void set_byte_model(const ByteModel& bytes) {
    bytes_ = bytes;
    result_.bytes = bytes;
  }

  // Timed calls rotating through `sets` in whole rounds; records the timing,
  // bandwidth, roofline and its fraction in the case's result. Between rounds
  // guards and inputs are checked, every output must have been written, and
  // `fresh` spot-checks some rows of each set and stages new inputs, written
  // last, after the poisoning (FreshInputs, InputStage). The driver still
  // checks every set fully against the inputs it holds at the end.
  const TimingResult& time(const std::string& op, const nlohmann::json& scalars,
                           const std::vector<std::vector<SharedTensor*>>& sets, const StageInputs& fresh = {});

  // The memory witnesses (docs/ARCHITECTURE.md, Witnesses). A driver takes a
  // baseline before the work (on the CPU, the worker's reading from before its
  // library loaded), then calls witness_memory() where the submission reports
  // what it holds: growth far beyond the claim is understated_memory. It
  // returns what a memory score takes the claim as at least: the growth less
  // the allowances (and on a GPU less what the contract lets it hold beyond
  // the claim), host and device summed; 0 without a witness.
  struct MemoryBaseline {
    std::optional<int64_t> resident;
    std::optional<int64_t> device;
  };
  MemoryBaseline memory_baseline();
  // `device_claimed`: what the device's witness judges against where the
  // contract lets a GPU hold more than the claim (kv_cache: a pool up to the
  // budget, allocated up front); the claim where it is negative.
  int64_t witness_memory(const std::string& what, int64_t claimed, const MemoryBaseline& baseline,
                         int64_t device_claimed = -1);

  // The peak memory witness over the calls between open_peak_window() and
  // close_peak_window(): records as `metric` (the largest over the case)
  // how far the submission's resident memory rose at its highest beyond the
  // calls' `tensor_bytes` (harness/witness/peak_memory.h); nothing where
  // there is no such witness.
  void open_peak_window();
  void close_peak_window(const std::string& metric, int64_t tensor_bytes);

  nlohmann::json& metrics() { return result_.metrics; }
  // The case's parameters in its result: a case whose shape is drawn from
  // its seed records the shape it drew.
  nlohmann::json& params() { return result_.params; }
  // Records what is wrong without ending the case (a false claim about
  // memory): the workload goes on, its answers are still checked, and the
  // case's verdict is the gravest thing it found (settle_verdict). The first
  // finding of each verdict is kept.
  void note_failure(Verdict verdict, const std::string& message);
  // `bytes` (as many as the tensor's) are what `tensor` holds as an input
  // from now on: the caller's own copy, changed only as the changes it
  // stages (the stateless driver's generated inputs and their refreshes).
  // Calls and timings check the input against it, with no copy of their own.
  void keep_pristine(const SharedTensor& tensor, const void* bytes);
  [[noreturn]] void fail(Verdict verdict, const std::string& message) const;

 private:
  struct Snapshot {
    const SharedTensor* tensor;
    std::vector<unsigned char> bytes;         // a copy of the input, or empty where
    const unsigned char* pristine = nullptr;  // the caller keeps one (keep_pristine)
    const unsigned char* data() const { return pristine != nullptr ? pristine : bytes.data(); }
  };
  // The bindings of a timing's sets, the snapshots of their inputs, and the
  // bytes of one set's tensors.
  struct TimedSets {
    std::vector<std::vector<Binding>> bindings;
    std::vector<std::vector<Snapshot>> snapshots;
    double set_bytes = 0;
  };
  TimedSets prepare_timed_sets(const std::string& op, const nlohmann::json& scalars,
                               const std::vector<std::vector<SharedTensor*>>& set_tensors);
  // Guards, inputs and outputs of every set; `round` names the round in messages.
  void check_timed_sets(const std::string& op, const TimedSets& timed, const std::string& round) const;
  // The checks after round `round` and the next round's new inputs.
  void start_round(const std::string& op, TimedSets& timed, const StageInputs& fresh, size_t round);
  TimingResult timing_of(const protocol::TimeReply& reply, const std::string& op, double poison_ns,
                         const TimedSets& timed) const;
  void record_bandwidth();
  // Judges the device's growth against `may_hold`; returns what a memory
  // score may take `claimed` as at least (0 without a reading).
  int64_t witness_device_memory(const std::string& what, int64_t claimed, int64_t may_hold,
                                const MemoryBaseline& baseline);
  Rng& secret();  // seeded from the system's entropy on first use
  // The tensors as the op's declaration binds them; throws HarnessError
  // naming the declaration where the call disagrees with it.
  std::vector<Binding> bind(const std::string& op, const nlohmann::json& scalars,
                            const std::vector<SharedTensor*>& tensors) const;
  // A declared result missing from a successful reply is the submission's error.
  void check_results(const std::string& op, const protocol::CallReply& reply) const;
  // Guard bands filled, outputs poisoned.
  void guard_and_poison(const std::vector<Binding>& bindings);
  // The same, and a snapshot of every input appended to `snapshots`.
  void prepare(const std::vector<Binding>& bindings, std::vector<Snapshot>& snapshots);
  void check_status(int32_t status, const std::string& message, const std::string& op) const;
  void check_integrity(const std::vector<Binding>& bindings, const std::vector<Snapshot>& snapshots,
                       const std::string& when, bool require_written = true) const;
  uint64_t guard_seed() const;
  // How long poisoning one set's outputs takes in this process.
  double time_poisoning(const std::vector<Binding>& set) const;
  // The timing witness: fails the case with forged_timing when the
  // harness's clock contradicts the worker's claim; records it otherwise.
  void judge_witness(const protocol::TimeReply& reply, double poison_ns, double all_sets_bytes, const std::string& op,
                     TimingResult& timing) const;

  const CaseSpec& spec_;
  const RunSettings& settings_;
  Executor& executor_;
  const DeviceInfo& device_;
  std::optional<PeakWindow> peak_window_;
  CaseResult& result_;
  const ChallengeOps& ops_;
  ByteModel bytes_;
  std::vector<std::unique_ptr<SharedTensor>> tensors_;
  std::map<const SharedTensor*, const unsigned char*> pristine_;
  std::optional<Rng> secret_;
};

}  // namespace harness
