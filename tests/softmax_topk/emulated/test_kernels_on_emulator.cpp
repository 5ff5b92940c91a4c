// cuda-fast's softmax_topk, run on the host by the warp emulator and judged
// by the challenge's own check and tolerance: each of its three paths (a
// warp a row; a block a row; a row split over blocks and merged), on the
// data that breaks top-k kernels (ties at the k-th place, masked entries,
// the top in one warp's slice or one tile, rows sorted either way), under
// each of the emulator's schedules. cuda-fast passes every case on an H200;
// here its logic is tested on every machine.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/challenge_api/challenge.h"
#include "kernels_on_emulator.h"
#include "softmax_topk/host/check.h"
#include "softmax_topk/host/data.h"
#include "warp_emulation/every_schedule.h"

namespace softmax_topk::emulated {
namespace {

Tolerance configured_tolerance() {
  const auto& probs = harness::find_challenge("softmax_topk").config().tolerances.at("probs");
  return Tolerance{probs.at("rtol").get<double>(), probs.at("atol").get<double>()};
}

struct Shape {
  TopkCase c;
  int sm_count;
  std::string path;  // the plan it must take
};

std::vector<Shape> shapes() {
  constexpr int kManySms = 132;
  return {
      {TopkCase{9, 1000, 10, Data::normal}, kManySms, "warp rows"},
      {TopkCase{5, 4096, 64, Data::ties}, kManySms, "warp rows"},
      {TopkCase{3, 37, 37, Data::masked, 0.9}, kManySms, "warp rows"},
      {TopkCase{4, 3000, 20, Data::cluster_warp}, kManySms, "warp rows"},
      {TopkCase{2, 10000, 100, Data::dominant_late, 30}, kManySms, "block rows"},
      {TopkCase{2, 9000, 1024, Data::tile_ties}, kManySms, "block rows"},
      {TopkCase{2, 12000, 300, Data::masked_first_tile}, kManySms, "block rows"},
      {TopkCase{2, 5000, 65, Data::descending}, kManySms, "block rows"},
      {TopkCase{1, 70000, 50, Data::cluster_tile}, 8, "4 segments a row, merged"},
      {TopkCase{2, 66000, 200, Data::offset, 85}, 8, "4 segments a row, merged"},
  };
}

void expect_passes(const Shape& s, uint64_t seed) {
  const TopkCase& c = s.c;
  std::vector<float> logits(static_cast<size_t>(c.rows * c.vocab));
  generate_logits(c, seed, logits.data());
  std::vector<float> probs(static_cast<size_t>(c.rows * c.k), -1.0f);
  std::vector<int32_t> indices(probs.size(), -1);
  std::string path;
  const std::string error =
      softmax_topk_on_emulator(logits.data(), c.rows, c.vocab, c.k, s.sm_count, probs.data(), indices.data(), &path);
  const std::string name = std::to_string(c.rows) + " x " + std::to_string(c.vocab) + ", k " + std::to_string(c.k) +
                           ", " + data_name(c.data);
  ASSERT_EQ(error, "") << name;
  EXPECT_EQ(path, s.path) << name;
  const harness::CheckReport report =
      check_answer(c, logits.data(), probs.data(), indices.data(), configured_tolerance());
  EXPECT_TRUE(report.ok) << name << " (" << path << "): " << report.message;
}

TEST(SoftmaxTopkOnEmulator, EveryPathPassesTheChallengesCheckUnderEverySchedule) {
  warp_emulation::for_every_schedule([] {
    for (const Shape& s : shapes()) expect_passes(s, 20261128);
  });
}

}  // namespace
}  // namespace softmax_topk::emulated
