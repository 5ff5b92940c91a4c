// A timing of a compiled submission driven by the harness (WorkerExecutor::
// time): batches of calls whose sizes the harness chooses, each request
// timed by the harness's own clock (the timing witness), a GPU worker's
// copies staged in requests of their own around each timed one.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "harness/challenge_api/executor.h"
#include "harness/ipc/protocol.h"

namespace harness {

class WorkerExecutor;

class BatchedTiming {
 public:
  BatchedTiming(WorkerExecutor& worker, const std::string& op, const nlohmann::json& scalars,
                const std::vector<std::vector<Binding>>& sets, const protocol::TimingPolicy& policy, double timeout_s,
                const FreshInputs& fresh);
  protocol::TimeReply run();

 private:
  bool warm_up();
  void measure();
  // Calls in batches; with fresh inputs, in whole rounds of one request each,
  // new inputs before every round but the first. False on an error status.
  bool run_calls(size_t warmup, size_t calls);
  bool run_batch(size_t warmup, size_t calls);
  // The worker's reply to a batch, checked and added to the totals.
  bool take_reply(const nlohmann::json& body, size_t warmup, size_t calls);
  void copy_sets(const char* direction);
  // The harness's clock per call over the last batch, its staging included.
  double last_per_call_ns() const;
  size_t next_batch_size(double per_call_ns, double left_ns, size_t check_every) const;

  WorkerExecutor& worker_;
  const std::string op_;
  const std::string what_;
  const nlohmann::json& scalars_;
  nlohmann::json set_list_ = nlohmann::json::array();
  std::set<uint64_t> set_buffer_ids_;
  const size_t sets_;
  const protocol::TimingPolicy& policy_;
  const double timeout_s_;
  const FreshInputs& fresh_;
  protocol::TimeReply total_;
  size_t next_set_ = 0;
  bool called_ = false;
  double last_batch_ns_ = 0;
  double last_batch_staging_ns_ = 0;  // the worker's staging requests, or the harness's own copies
  double harness_copies_ns_ = 0;      // harness-owned device memory: its copies, all batches
  size_t last_batch_calls_ = 0;
};

}  // namespace harness
