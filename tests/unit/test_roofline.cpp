// Each perf case is judged against the roofline of its own byte model.
#include <gtest/gtest.h>

#include "harness/device/roofline.h"

namespace harness {
namespace {

// Figures of a 2-core VM: a read sweep beats a copy, a fill sits between.
PeakBandwidth measured() {
  PeakBandwidth p;
  p.copy_bytes_per_second = 40e9;
  p.read_bytes_per_second = 50e9;
  p.write_bytes_per_second = 42e9;
  return p;
}

TEST(Roofline, AReadOnlyCaseMeetsTheReadCeiling) {
  EXPECT_DOUBLE_EQ(roofline_bytes_per_second(measured(), ByteModel{1e9, 0}), 50e9);
}

TEST(Roofline, AWriteOnlyCaseMeetsTheWriteCeiling) {
  EXPECT_DOUBLE_EQ(roofline_bytes_per_second(measured(), ByteModel{0, 1e9}), 42e9);
}

TEST(Roofline, ReadsAndWritesTakeTheirTurns) {
  // 1 GB read at 50 GB/s and 1 GB written at 42 GB/s: 2 GB in 43.8 ms.
  const double expected = 2e9 / (1e9 / 50e9 + 1e9 / 42e9);
  EXPECT_DOUBLE_EQ(roofline_bytes_per_second(measured(), ByteModel{1e9, 1e9}), expected);
  EXPECT_GT(expected, measured().copy_bytes_per_second);
}

TEST(Roofline, ACeilingBelowTheCopyPeakCountsAsTheCopyPeak) {
  PeakBandwidth p = measured();
  p.write_bytes_per_second = 0;  // a peak cached before writes were measured
  EXPECT_DOUBLE_EQ(roofline_bytes_per_second(p, ByteModel{0, 1e9}), 40e9);
  p.read_bytes_per_second = 21e9;  // a read sweep short of parallelism
  EXPECT_DOUBLE_EQ(roofline_bytes_per_second(p, ByteModel{1e9, 0}), 40e9);
}

TEST(Roofline, NothingToJudgeWithoutAPeakOrBytes) {
  EXPECT_EQ(roofline_bytes_per_second(PeakBandwidth{}, ByteModel{1e9, 1e9}), 0);
  EXPECT_EQ(roofline_bytes_per_second(measured(), ByteModel{}), 0);
}

// Exploit: a fill-heavy kernel that skips work. Against the device-wide
// ceiling (the fastest of read, write and copy, plus 10%: 55 GB/s) its 50
// GB/s passes; against its own roofline (42 GB/s plus 10%) it cannot be real.
TEST(Roofline, AWriteBoundCaseFasterThanWritesCanGoIsBeyondItsCeiling) {
  const ByteModel fill{0, 1e9};
  const double claimed = 50e9;
  EXPECT_LT(claimed, measured().ceiling_bytes_per_second());
  EXPECT_GT(claimed, roofline_ceiling_bytes_per_second(measured(), fill));
}

}  // namespace
}  // namespace harness
