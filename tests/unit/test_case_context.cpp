// The anti-cheating checks of CaseContext around one call (bounds, poison,
// modified inputs, statuses) and its judgement of a GPU worker's memory,
// driven by a fake executor that misbehaves on purpose.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "case_context_fixture.h"
#include "harness_abi.h"
#include "support/test_support.h"

namespace harness {
namespace {

using testing::Fixture;
using testing::test_ops;
using testing::verdict_of;
using testing::write_double;

TEST(CaseContext, ACorrectCallPasses) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    write_double(t);
    return HARNESS_STATUS_OK;
  };
  EXPECT_NO_THROW(f.call_once());
}

TEST(CaseContext, AnElementLeftUnwrittenIsFoundWithItsIndex) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    const float keep = t[1].tensor->as<float>()[6];  // the poison
    write_double(t);
    t[1].tensor->as<float>()[6] = keep;
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { f.call_once(); });
  EXPECT_EQ(v.verdict(), Verdict::unwritten_output);
  EXPECT_NE(v.message().find("1 of 8 elements"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find("[1, 2]"), std::string::npos) << v.message();
}

TEST(CaseContext, WritesPastEitherEndAreOutOfBounds) {
  for (int offset : {8, -1}) {
    Fixture f;
    f.executor.behaviour = [offset](const std::vector<Binding>& t, int) {
      write_double(t);
      t[1].tensor->as<float>()[offset] = 1.0f;
      return HARNESS_STATUS_OK;
    };
    const auto v = verdict_of([&] { f.call_once(); });
    EXPECT_EQ(v.verdict(), Verdict::out_of_bounds_write) << offset;
    EXPECT_NE(v.message().find(offset > 0 ? "after its end" : "before its start"), std::string::npos) << v.message();
  }
}

TEST(CaseContext, AModifiedInputIsReportedWithOldAndNewValue) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    write_double(t);
    t[0].tensor->as<float>()[3] = -5.0f;
    return HARNESS_STATUS_OK;
  };
  const auto v = verdict_of([&] { f.call_once(); });
  EXPECT_EQ(v.verdict(), Verdict::input_modified);
  EXPECT_NE(v.message().find("3 became -5"), std::string::npos) << v.message();
}

TEST(CaseContext, StatusesBecomeUnsupportedAndError) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>&, int) { return HARNESS_STATUS_UNSUPPORTED; };
  EXPECT_EQ(verdict_of([&] { f.call_once(); }).verdict(), Verdict::unsupported);
  f.executor.behaviour = [](const std::vector<Binding>&, int) { return HARNESS_STATUS_ERROR; };
  const auto v = verdict_of([&] { f.call_once(); });
  EXPECT_EQ(v.verdict(), Verdict::error);
  EXPECT_NE(v.message().find("fake message"), std::string::npos);
}

TEST(CaseContext, OutOfBoundsIsReportedBeforeUnwrittenOutput) {
  Fixture f;
  f.executor.behaviour = [](const std::vector<Binding>& t, int) {
    t[1].tensor->as<float>()[8] = 0.0f;  // writes past the end, and nothing inside
    return HARNESS_STATUS_OK;
  };
  EXPECT_EQ(verdict_of([&] { f.call_once(); }).verdict(), Verdict::out_of_bounds_write);
}

// A GPU worker's memory score takes its claim as at least what the driver
// saw it grow by, less the device's allowance (64 MiB) and less what its
// contract lets a GPU hold beyond the claim.
TEST(CaseContext, AGpuMemoryScoreTakesTheClaimAsAtLeastTheDevicesGrowthBeyondItsAllowances) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  Fixture f;
  f.device.id = "cuda:0";
  f.device.kind = "cuda";
  // A claim of 1 GiB, 1178 MiB grown: within the verdict's 1.1x + 64 MiB,
  // so it passes, but scores as what it holds beyond the allowance.
  f.executor.device_readings = {{600 * kMiB, "", 0}, {(600 + 1178) * kMiB, "", 0}};
  CaseContext ctx(f.spec, f.settings, f.executor, f.device, f.result, test_ops());
  const CaseContext::MemoryBaseline baseline = ctx.memory_baseline();
  EXPECT_EQ(ctx.witness_memory("after the call", 1024 * kMiB, baseline), (1178 - 64) * kMiB);
  EXPECT_EQ(f.result.metrics["witnessed_device_memory_bytes"], 1178 * kMiB);

  // A kv_cache's pool allocated up front within its budget (1 GiB, with an
  // attend's 76 MiB of scores) while 100 MiB of it is in use is what its
  // contract allows: the score keeps its claim (36 MiB < 100 MiB).
  f.executor.device_readings = {{600 * kMiB, "", 0}, {(600 + 1100) * kMiB, "", 0}};
  f.executor.next_reading = 0;
  const CaseContext::MemoryBaseline pool_baseline = ctx.memory_baseline();
  EXPECT_EQ(ctx.witness_memory("after an append", 100 * kMiB, pool_baseline, 1100 * kMiB), 36 * kMiB);

  // Without a reading there is nothing to take it as.
  f.executor.device_readings = {{std::nullopt, "no driver", 0}};
  f.executor.next_reading = 0;
  EXPECT_EQ(ctx.witness_memory("after the call", 1024 * kMiB, ctx.memory_baseline()), 0);
}

// A GPU worker's host memory is judged against its claim as a CPU worker's
// is, with its runtime's allowance (64 MiB) in place of the CPU's: 500 MiB
// grown beyond a claim of 16 KiB is understated_memory in both, 40 MiB
// only in the CPU worker. What the GPU worker holds beyond the allowance
// adds to the score's floor; with the verdict off it passes. A false claim
// is noted, not final: the case goes on (CaseContext::note_failure).
TEST(CaseContext, AGpuWorkersHostMemoryIsJudgedWithItsRuntimesAllowance) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  constexpr int64_t kClaim = 16 * 1024;
  auto gpu_fixture = [](int64_t grown) {
    auto f = std::make_unique<Fixture>();
    f->device.id = "cuda:0";
    f->device.kind = "cuda";
    f->executor.resident_readings = {300 * kMiB, 300 * kMiB + grown};
    f->executor.device_readings = {{600 * kMiB, "", 0}};
    return f;
  };
  {
    auto gpu = gpu_fixture(500 * kMiB);
    CaseContext ctx(gpu->spec, gpu->settings, gpu->executor, gpu->device, gpu->result, test_ops());
    EXPECT_NO_THROW(ctx.witness_memory("after forward", kClaim, ctx.memory_baseline()));
    ASSERT_EQ(gpu->result.other_failures.size(), 1u);
    EXPECT_EQ(gpu->result.other_failures[0].verdict, Verdict::understated_memory);
    EXPECT_NE(gpu->result.other_failures[0].message.find("after forward"), std::string::npos);
    EXPECT_EQ(gpu->result.metrics["witnessed_host_memory_bytes"], 500 * kMiB);
    EXPECT_FALSE(gpu->result.metrics.contains("witnessed_memory_bytes"));
  }
  {
    auto gpu = gpu_fixture(40 * kMiB);
    CaseContext ctx(gpu->spec, gpu->settings, gpu->executor, gpu->device, gpu->result, test_ops());
    EXPECT_EQ(ctx.witness_memory("after forward", kClaim, ctx.memory_baseline()), 0);
    EXPECT_EQ(gpu->result.metrics["witnessed_host_memory_bytes"], 40 * kMiB);
    EXPECT_TRUE(gpu->result.other_failures.empty());
  }
  {
    testing::ScopedEnv off("HARNESS_WITNESS_DISABLE", "gpu-host-memory-verdict");
    auto gpu = gpu_fixture(500 * kMiB);
    CaseContext ctx(gpu->spec, gpu->settings, gpu->executor, gpu->device, gpu->result, test_ops());
    EXPECT_EQ(ctx.witness_memory("after forward", kClaim, ctx.memory_baseline()), (500 - 64) * kMiB);
    EXPECT_TRUE(gpu->result.other_failures.empty());
  }
  Fixture cpu;
  cpu.executor.resident_readings = {300 * kMiB, 340 * kMiB};
  CaseContext cpu_ctx(cpu.spec, cpu.settings, cpu.executor, cpu.device, cpu.result, test_ops());
  cpu_ctx.witness_memory("after forward", kClaim, cpu_ctx.memory_baseline());
  ASSERT_EQ(cpu.result.other_failures.size(), 1u);
  EXPECT_EQ(cpu.result.other_failures[0].verdict, Verdict::understated_memory);
}

}  // namespace
}  // namespace harness
