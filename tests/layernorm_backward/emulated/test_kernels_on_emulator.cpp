// cuda-fast's layernorm, forward and backward, run on the host by the warp
// emulator and judged by the challenge's own checks and tolerances: rows
// kept in registers by 1 to 1024 threads, and the long rows that are not;
// float4 and scalar loads; rows shared by a block's row groups; the data
// whose variance vanishes, sits under an offset or overflows a square;
// under each of the emulator's schedules. cuda-fast passes every case on an
// H200; here its logic is tested on every machine.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "kernels_on_emulator.h"
#include "layernorm_backward/host/check.h"
#include "layernorm_backward/host/data.h"
#include "warp_emulation/every_schedule.h"

namespace layernorm::emulated {
namespace {

Tolerances configured_tolerances() { return harness::find_challenge("layernorm_backward").element_tolerances(); }

std::vector<LnCase> cases() {
  return {
      LnCase{7, 1, Data::normal},    LnCase{33, 3, Data::normal},        LnCase{9, 64, Data::zero},
      LnCase{40, 768, Data::normal}, LnCase{5, 1000, Data::offset, 1e4}, LnCase{3, 4099, Data::tiny},
      LnCase{4, 4096, Data::huge},   LnCase{2, 20000, Data::scaled},     LnCase{3, 17000, Data::constant},
  };
}

void expect_passes(const LnCase& c, uint64_t seed, int sm_count) {
  const size_t n = static_cast<size_t>(c.rows * c.dim), d = static_cast<size_t>(c.dim);
  std::vector<float> x(n), gamma(d), beta(d), dy(n);
  generate_inputs(c, seed, x.data(), gamma.data(), beta.data(), dy.data());
  const std::string name = std::to_string(c.rows) + " x " + std::to_string(c.dim) + ", " + data_name(c.data);

  std::vector<float> y(n);
  std::vector<RowStats> saved(static_cast<size_t>(c.rows));
  std::string plan;
  std::string error =
      forward_on_emulator(x.data(), gamma.data(), beta.data(), c.rows, c.dim, c.eps, y.data(), saved.data(), &plan);
  ASSERT_EQ(error, "") << name;
  const Tolerances tolerances = configured_tolerances();
  harness::CheckReport report = check_forward(c, x.data(), gamma.data(), beta.data(), y.data(), tolerances);
  EXPECT_TRUE(report.ok) << name << ", forward (" << plan << "): " << report.message;

  std::vector<float> dx(n), dgamma(d), dbeta(d);
  error = backward_on_emulator(dy.data(), x.data(), gamma.data(), saved.data(), c.rows, c.dim, sm_count, dx.data(),
                               dgamma.data(), dbeta.data(), &plan);
  ASSERT_EQ(error, "") << name;
  report = check_backward(c, dy.data(), x.data(), gamma.data(), dx.data(), dgamma.data(), dbeta.data(), tolerances);
  EXPECT_TRUE(report.ok) << name << ", backward (" << plan << "): " << report.message;
}

TEST(LayernormOnEmulator, ForwardAndBackwardPassTheChallengesChecksUnderEverySchedule) {
  // Two multiprocessors: the backward's rows spread over few blocks, each
  // block summing many rows into its partial row.
  warp_emulation::for_every_schedule([] {
    for (const LnCase& c : cases()) expect_passes(c, 20261128, 2);
  });
}

}  // namespace
}  // namespace layernorm::emulated
