// A GPU worker's timed requests are staged: its sets go to the device in an
// "upload" request before each timed request and come back in a
// "download" after it, so that the harness's clock around the timed
// request sees the calls alone (harness/witness/timing_witness.h). The
// messages are the same for every worker, so a CPU worker, whose copies are
// no-ops, shows the protocol here; what staging does to the witness on a
// GPU is tests/gpu/test_gpu_witnesses.cpp.
//
// Where the harness owns the device memory (harness/device_memory, here its
// stand-in device) there are no such requests: the harness copies the sets
// into their twins as each timed request goes out and reads them back at its
// reply, and work hidden in a staging request has nowhere to hide.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "harness/core/stats.h"
#include "harness/executors/worker_executor.h"
#include "harness/witness/timing_witness.h"
#include "support/test_support.h"

namespace harness {
namespace {

struct TimedSets {
  std::vector<std::unique_ptr<SharedTensor>> tensors;
  std::vector<std::vector<Binding>> sets;
};

// Two sets of softmax_topk's tensors, 64 rows of 4096 logits, top 8.
TimedSets softmax_sets() {
  TimedSets t;
  uint64_t id = 1;
  for (int s = 0; s < 2; ++s) {
    auto logits = std::make_unique<SharedTensor>(id++, TensorSpec{"logits", DType::f32, {64, 4096}});
    auto probs = std::make_unique<SharedTensor>(id++, TensorSpec{"probs", DType::f32, {64, 8}});
    auto indices = std::make_unique<SharedTensor>(id++, TensorSpec{"indices", DType::i32, {64, 8}});
    float* x = logits->as<float>();
    for (size_t i = 0; i < logits->elements(); ++i) x[i] = static_cast<float>((i * 7919) % 4096) / 512.0f;
    t.sets.push_back({{logits.get(), protocol::Access::in},
                      {probs.get(), protocol::Access::out},
                      {indices.get(), protocol::Access::out}});
    for (auto* tensor : {&logits, &probs, &indices}) t.tensors.push_back(std::move(*tensor));
  }
  return t;
}

const SubmissionRecord* softmax_record(const Catalog& catalog, const std::string& name) {
  for (const SubmissionRecord& r : catalog.records()) {
    if (r.challenge == "softmax_topk" && r.name == name && !r.library.empty()) return &r;
  }
  ADD_FAILURE() << "no built softmax_topk submission named " << name;
  return nullptr;
}

// The last round's answers are in the harness's tensors: each row's top
// index is a logit no other of the row exceeds.
void expect_last_round_answered(const TimedSets& t) {
  for (const auto& set : t.sets) {
    const float* x = set[0].tensor->as<float>();
    const int32_t* top = set[2].tensor->as<int32_t>();
    for (int64_t row = 0; row < 64; ++row) {
      const float* xr = x + row * 4096;
      ASSERT_GE(top[row * 8], 0);
      ASSERT_LT(top[row * 8], 4096);
      EXPECT_EQ(xr[top[row * 8]], *std::max_element(xr, xr + 4096)) << "row " << row;
    }
  }
}

// The witness's judgement of a staged timing of softmax_sets(), with the
// allowances CaseContext states for a staged worker on the CPU.
WitnessJudgement judge_staged(const protocol::TimeReply& reply) {
  const double all_sets_bytes = 2.0 * (64 * 4096 + 64 * 8 + 64 * 8) * 4.0;
  WitnessAllowances allowances;
  allowances.per_call_ns = 10e3;
  allowances.per_request_ns = witness_per_request_ns("cpu", true);
  allowances.max_staging_per_request_ns = witness_max_staging_ns("cpu", all_sets_bytes);
  return judge_timing(reply.witnessed, median(reply.device_ns), allowances);
}

protocol::TimeReply time_softmax(bool stage_copies, TimedSets& t, int& rounds,
                                 const SubmissionRecord* submission = softmax_record(testing::project_catalog(),
                                                                                     "cpu-fast"),
                                 bool harness_owned_memory = false) {
  if (submission == nullptr) return {};
  testing::TempFolder folder;
  WorkerTarget target = testing::cpu_worker_target("softmax_topk", submission->library, folder.path("worker.log"));
  target.stage_copies = stage_copies;
  if (harness_owned_memory) target.device_memory = make_stand_in_device_memory();
  WorkerExecutor executor(target);
  protocol::TimingPolicy policy;
  policy.warmup_ms = 1;
  policy.min_samples = 6;
  policy.min_ms = 1;
  policy.max_ms = 100;
  // Each round swaps two logits of the first row: new inputs, every round.
  const auto fresh = [&] {
    ++rounds;
    for (auto& set : t.sets) std::swap(set[0].tensor->as<float>()[0], set[0].tensor->as<float>()[rounds % 4096]);
  };
  return executor.time("softmax_topk", {{"rows", 64}, {"vocab", 4096}, {"k", 8}}, t.sets, policy, 30, fresh);
}

TEST(StagedTiming, AStagedWorkerTimesTheSameCallsWithTheCopiesInRequestsOfTheirOwn) {
  for (const bool staged : {true, false}) {
    TimedSets t = softmax_sets();
    int rounds = 0;
    const protocol::TimeReply reply = time_softmax(staged, t, rounds);
    EXPECT_EQ(reply.status, 0) << reply.message;
    EXPECT_EQ(reply.staged, staged);
    EXPECT_EQ(reply.staging_ns > 0, staged) << reply.staging_ns;
    // Whole rounds, one request each, every one asked for and answered.
    ASSERT_FALSE(reply.witnessed.empty());
    EXPECT_EQ(reply.witnessed.size(), static_cast<size_t>(rounds) + 1);
    size_t timed = 0;
    for (const auto& r : reply.witnessed) {
      EXPECT_EQ(r.warmup_calls + r.timed_calls, 2u);
      EXPECT_LE(r.claimed_ns, r.ns);
      timed += r.timed_calls;
    }
    EXPECT_EQ(reply.device_ns.size(), timed);
    EXPECT_GE(timed, 6u);
    if (staged) {
      // Its staging (two messages a round) stands beside its claim.
      const WitnessJudgement j = judge_staged(reply);
      EXPECT_FALSE(j.contradicted) << j.message;
    }
    expect_last_round_answered(t);
  }
}

// Work hidden in the download after each staged timed request
// (tests/fixtures/softmax_topk/work-in-staging: every call's work, and 100
// ms more, done while the download request waits; each call itself waits
// the 20 ms it claims) is counted as the calls' time, beyond what the round's
// copies may take: the claim is contradicted. Without that judgement
// (HARNESS_WITNESS_DISABLE=gpu-staging-time) the same timing stands, scored
// at its claim, with right answers.
TEST(StagedTiming, WorkHiddenInTheDownloadAfterATimedRequestCountsAsTheCalls) {
  const SubmissionRecord* hiding = softmax_record(testing::fixture_catalog(), "fixture-work-in-staging");
  ASSERT_NE(hiding, nullptr);
  TimedSets t = softmax_sets();
  int rounds = 0;
  const protocol::TimeReply reply = time_softmax(true, t, rounds, hiding);
  ASSERT_EQ(reply.status, 0) << reply.message;
  ASSERT_TRUE(reply.staged);
  expect_last_round_answered(t);
  // Each round's staging held the hidden 100 ms; each timed request, the
  // 20 ms calls it claims.
  ASSERT_FALSE(reply.witnessed.empty());
  for (const auto& r : reply.witnessed) {
    EXPECT_GT(r.staging_ns, 100e6);
    EXPECT_LT(r.ns, r.staging_ns);
  }
  const WitnessJudgement judged = judge_staged(reply);
  EXPECT_TRUE(judged.contradicted) << judged.message;
  EXPECT_NE(judged.message.find("uploads and downloads beyond what their copies may take"), std::string::npos)
      << judged.message;
  EXPECT_GT(judged.staging_counted_ns, 90e6 * static_cast<double>(reply.witnessed.size()));

  testing::ScopedEnv off("HARNESS_WITNESS_DISABLE", "gpu-staging-time");
  const WitnessJudgement through = judge_staged(reply);
  EXPECT_FALSE(through.contradicted) << through.message;
  EXPECT_EQ(through.staging_counted_ns, 0.0);
  EXPECT_EQ(through.median_used_ns, median(reply.device_ns));
  EXPECT_LT(through.median_used_ns, 50e6);  // scored at 20 ms a call, while each round hid 100 ms more
}

// With the harness owning the device memory, an honest kernel is timed as
// before: right answers read from the twins at each reply, every claim
// within the harness's clock around its request, and no staging the worker
// could stretch (the harness's copies are its own, outside every request).
TEST(HarnessOwnedDeviceMemory, AnHonestKernelIsTimedWithTheHarnessCopyingItsSets) {
  TimedSets t = softmax_sets();
  int rounds = 0;
  const protocol::TimeReply reply =
      time_softmax(true, t, rounds, softmax_record(testing::project_catalog(), "cpu-fast"), true);
  ASSERT_EQ(reply.status, 0) << reply.message;
  EXPECT_FALSE(reply.staged);
  EXPECT_TRUE(reply.harness_copies);
  EXPECT_EQ(reply.staging_ns, 0.0);
  ASSERT_EQ(reply.witnessed.size(), static_cast<size_t>(rounds) + 1);
  for (const auto& r : reply.witnessed) {
    EXPECT_EQ(r.staging_ns, 0.0);
    EXPECT_LE(r.claimed_ns, r.ns);
  }
  EXPECT_FALSE(judge_staged(reply).contradicted) << judge_staged(reply).message;
  expect_last_round_answered(t);
}

// The exploit of WorkHiddenInTheDownloadAfterATimedRequestCountsAsTheCalls
// (fixture-work-in-staging: the work done while the download request waits)
// against harness-owned memory: no download request ever comes, the harness
// reads the twins at each reply, and what it reads is what it put there. With
// the worker staging its own copies and their time not judged (the defence
// off), the same fixture passes with right answers, scored at the 20 ms a
// call it claims while each round hid 100 ms more.
TEST(HarnessOwnedDeviceMemory, WorkHiddenInTheDownloadHasNoDownloadToHideIn) {
  const SubmissionRecord* hiding = softmax_record(testing::fixture_catalog(), "fixture-work-in-staging");
  ASSERT_NE(hiding, nullptr);
  TimedSets t = softmax_sets();
  int rounds = 0;
  const protocol::TimeReply reply = time_softmax(true, t, rounds, hiding, true);
  ASSERT_EQ(reply.status, 0) << reply.message;
  EXPECT_FALSE(reply.staged);
  // What the harness put in the outputs is what it read back: no row's top
  // index is its maximum.
  for (const auto& set : t.sets) {
    const float* x = set[0].tensor->as<float>();
    const int32_t* top = set[2].tensor->as<int32_t>();
    for (int64_t row = 0; row < 64; ++row) {
      const float* xr = x + row * 4096;
      const bool answered =
          top[row * 8] >= 0 && top[row * 8] < 4096 && xr[top[row * 8]] == *std::max_element(xr, xr + 4096);
      EXPECT_FALSE(answered) << "row " << row;
    }
  }

  testing::ScopedEnv off("HARNESS_WITNESS_DISABLE", "gpu-staging-time");
  TimedSets through = softmax_sets();
  int through_rounds = 0;
  const protocol::TimeReply staged = time_softmax(true, through, through_rounds, hiding, false);
  ASSERT_EQ(staged.status, 0) << staged.message;
  EXPECT_TRUE(staged.staged);
  expect_last_round_answered(through);
  EXPECT_FALSE(judge_staged(staged).contradicted);
  EXPECT_LT(judge_staged(staged).median_used_ns, 50e6);
}

}  // namespace
}  // namespace harness
