// The results of a run: what results.json holds (schema harness.results/v1,
// written by results_json.cpp) and what every report is rendered from.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/stats.h"
#include "harness/core/system_info.h"
#include "harness/definitions/verdict.h"
#include "harness/device/device_info.h"
#include "harness/device/roofline.h"

namespace harness {

inline constexpr const char* kResultsSchema = "harness.results/v1";

struct TimingResult {
  std::string clock;               // "cuda-events", "cpu-monotonic" or "wall-clock"
  std::vector<double> samples_ns;  // one per timed call, in call order
  SampleSummary summary;           // of samples_ns
  size_t sets = 0;                 // input sets rotated through
  double set_bytes = 0;            // bytes of one set's tensors
  bool cache_cold = false;         // all sets together, or one call's byte model, exceed twice the device's cache
  size_t warmup_calls = 0;
  std::string note;
  // The harness's own clock around the timing request (absent where the
  // samples are the harness's own, e.g. process submissions): see
  // harness/witness/timing_witness.h.
  struct Witness {
    double request_ns = 0;   // harness clock around the requests, summed
    double overhead_ns = 0;  // stated overhead subtracted from it
    double calls_ns = 0;     // the claimed calls, summed (warm-up included)
    size_t calls = 0;
    double floor_ns = 0;  // the shortest per-call time the witness allows (a median over requests)
    size_t requests = 0;  // how many requests the calls took: (request_ns - calls_ns) / requests is
                          // what one request cost beyond its calls, the figure the allowance per
                          // request must cover (witness_per_request_ns)
    bool staged = false;  // the timed requests held the calls alone, the device copies in requests
                          // of their own (a GPU worker's), whose time is staging_ns
    double staging_ns = 0;
    double staging_counted_ns = 0;  // the part of staging_ns beyond what the copies may take, in request_ns
    // What one round's staging may take (witness_max_staging_ns); none where
    // HARNESS_WITNESS_DISABLE switched the judgement off (unlimited).
    std::optional<double> staging_allowed_ns = std::nullopt;
    // How many times its claim the median timed call's request took at
    // least (WitnessJudgement::median_excess): over kWitnessMargin is
    // forged_timing. Infinity is written as 1e300 (JSON has none); none in
    // results from before it was recorded.
    std::optional<double> median_excess = std::nullopt;
  };
  std::optional<Witness> witness;
  // What else the machine did while the calls were timed
  // (harness/witness/machine_load.h), in cores busy on average: with other
  // processes' work, and with the harness's and the submission's. None where
  // /proc could not tell, and in results from before it was recorded.
  struct MachineLoad {
    double other_cores = 0;
    double ours_cores = 0;
    double seconds = 0;  // the window: the timing request(s), first to last
    int cores = 0;       // the machine's logical cores
    // Others held more than a quarter of the machine's cores: enough to slow
    // a timing that uses them all (the report says so; the gate does not
    // call such a timing a regression).
    bool busy() const { return other_cores > std::max(1, cores) / 4.0; }
  };
  std::optional<MachineLoad> machine_load;
  // The median the scores use: never below the witness's floor.
  double scored_median_ns() const { return witness ? std::max(summary.median, witness->floor_ns) : summary.median; }
  // The witness's floor raised the claimed median: the worker's samples
  // are faster than its requests allow, and what is shown and compared is
  // the floor.
  bool raised_to_floor() const { return witness && witness->floor_ns > summary.median; }
  // The samples as the scores see them: none below the witness's floor.
  std::vector<double> scored_samples_ns() const {
    std::vector<double> scored = samples_ns;
    if (witness) {
      for (double& s : scored) s = std::max(s, witness->floor_ns);
    }
    return scored;
  }
};

// One thing a case found wrong beside its verdict.
struct Finding {
  Verdict verdict = Verdict::pass;
  std::string message;
};

struct CaseResult {
  std::string id;
  Suite suite = Suite::correctness;
  nlohmann::json params = nlohmann::json::object();
  std::string description;
  uint64_t seed = 0;                // seed of this case's inputs
  Verdict verdict = Verdict::pass;  // the gravest thing found wrong (gravity()), or pass
  std::string message;
  std::vector<Finding> other_failures;                // what else the case found wrong, gravest first
  nlohmann::json metrics = nlohmann::json::object();  // error metrics and their tolerances
  std::optional<TimingResult> timing;
  ByteModel bytes;                      // the byte model: what the case must read and write
  std::optional<double> bandwidth;      // bytes per second: bytes.total() / median time
  std::optional<double> roofline;       // the fastest the byte model can move on the device (bytes/s)
  std::optional<double> peak_fraction;  // bandwidth / roofline
  std::string reproduce;                // command that re-runs exactly this case
  std::string worker_output;            // what the submission printed during the case (tail)
  double seconds = 0;                   // wall time the case took
};

// What a mutant, exploit or negative control must get: a case of `suite`
// with `verdict`; with every_case, every case of the suite must fail.
struct Expectation {
  Suite suite = Suite::correctness;
  Verdict verdict = Verdict::wrong_answer;
  bool every_case = false;
  // The cases it runs on, when not the selection's (an exploit aimed at
  // one perf case need not sit through the whole matrix). Empty: the
  // selection's cases.
  std::vector<std::string> cases;
};

// Roles that test the harness rather than compete: mutants (realistic
// bugs), exploits (attacks on the harness), the built-in negative controls
// and the float32 controls (plain, sound float32 code written without the
// harness in mind, which every tolerance must let pass). They run only when
// asked for and are never ranked.
bool is_unranked_role(const std::string& role);
// A peer (PyTorch eager) is judged like a submission in every run, shown in
// every report beside ours and the measure of "x times" it, but never
// ranked, gated, or the cause of a run's failure: it is context.
bool is_peer_role(const std::string& role);

struct SubmissionInfo {
  std::string name;
  std::string challenge;
  std::string device;  // "cpu" | "cuda"
  std::string role;  // "submission", "reference", "baseline", "peer", "mutant", "exploit", "control", "float32-control"
  std::string kind = "library";  // "library", "process" or "control"
  std::string origin;
  std::string description;
  std::string manifest_path;  // empty for the built-in controls
  std::optional<Expectation> expect;
};

struct BuildInfo {
  std::string status = "ok";  // "ok" | "failed" | "unavailable"
  std::string reason;
  std::string log_excerpt;  // the compiler's first errors
  std::string log_path;     // the full build log, when there is one
  bool built = true;        // false: the build never ran for it (no build.json)
};

struct DimensionScore {
  bool measured = false;  // false when the run held no case of this dimension
  double score = 0;       // 0..100
  double weight = 0;
  std::string detail;  // e.g. "27/28 cases pass"
};

struct Scores {
  std::map<std::string, DimensionScore> dimensions;
  double overall = 0;
  std::string grade;
  bool capped = false;  // a core correctness case failed: overall held to C at most
  bool ranked = true;   // false for mutants, controls and impossible speeds
  std::vector<std::string> notes;
};

struct EntryResult {
  std::string challenge;
  SubmissionInfo submission;
  std::string device;  // device id, e.g. "cpu", "cuda:0"
  BuildInfo build;
  std::vector<CaseResult> cases;
  std::optional<Scores> scores;

  // The case with this id, or nullptr.
  const CaseResult* find_case(const std::string& id) const;
};

struct RunInfo {
  std::string harness_version;
  std::string started;
  std::string finished;
  std::string git_commit;
  std::string command_line;
  uint64_t seed = 0;
  HostInfo host;
  nlohmann::json options = nlohmann::json::object();
  // Which parts of the workers' sandbox were active (harness/sandbox); empty
  // in results written before it existed.
  nlohmann::json sandbox = nlohmann::json::object();
  bool complete = false;  // false while running and for an interrupted run
};

struct RunResults {
  RunInfo run;
  std::vector<DeviceInfo> devices;
  std::vector<EntryResult> entries;

  const DeviceInfo* device(const std::string& id) const;
};

}  // namespace harness
